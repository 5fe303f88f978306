//! The return queue: staged effects waiting for the operator, in SQLite at
//! `<seam_home>/agent/local.sqlite` (with the agent's approved notes and the
//! knowledge graph, which approved notes add to).
//!
//! An item is `pending` until the operator decides: `approved` (a branch's
//! commits are copied from the staging repository into the operator's and its
//! target fast-forwarded, after checks of its own, then its worktree removed:
//! see `apply`; a note becomes permanent; an image is kept) or `rejected` (the
//! worktree deleted, the branch left for the builder to forget in its staging
//! repository; note discarded; image deleted). A decision is final, and it is
//! taken inside one write transaction, so two operators cannot both decide.
//!
//! The queue's file is the agent's to write: nothing in a row is trusted at
//! approval (paths are checked to lie under seam's staging, object ids by
//! their form, and the branch's content is read from its objects, not from
//! the row's preview or verdict).

use std::path::{Path, PathBuf};
use std::time::Duration;

use rusqlite::{Connection, OpenFlags, OptionalExtension, TransactionBehavior, params};
use serde::{Deserialize, Serialize};

use crate::apply;
use crate::git::GitError;
use seam_memory::time::{now_ms, rfc3339};

const SCHEMA_VERSION: i64 = 1;
const SCHEMA: &str = "
CREATE TABLE items (
    id INTEGER PRIMARY KEY,
    kind TEXT NOT NULL,
    turn TEXT NOT NULL,
    summary TEXT NOT NULL,
    preview TEXT NOT NULL,
    verdict TEXT NOT NULL,
    critic TEXT NOT NULL,
    status TEXT NOT NULL,
    created INTEGER NOT NULL,
    decided INTEGER,
    detail TEXT NOT NULL
);
CREATE TABLE notes (
    id INTEGER PRIMARY KEY,
    at INTEGER NOT NULL,
    title TEXT NOT NULL,
    text TEXT NOT NULL,
    item INTEGER NOT NULL
);
CREATE TABLE nodes (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL UNIQUE,
    kind TEXT NOT NULL,
    text TEXT NOT NULL DEFAULT ''
);
CREATE TABLE edges (
    src INTEGER NOT NULL REFERENCES nodes(id),
    dst INTEGER NOT NULL REFERENCES nodes(id),
    kind TEXT NOT NULL,
    PRIMARY KEY (src, dst, kind)
);
CREATE INDEX edges_dst ON edges (dst);
";

const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// What went wrong with the queue, and where. The operator's mistakes
/// ([`QueueError::NotFound`]) and refusals ([`QueueError::AlreadyDecided`],
/// [`QueueError::TargetMoved`], [`QueueError::CriticRejected`]) are distinct
/// variants so the CLI can give them their exit codes. A cause (git, SQLite, I/O) is part of
/// the message and not a `source()`: the local tools refuse with the message alone.
#[derive(Debug, thiserror::Error)]
pub enum QueueError {
    #[error("no queue item has id {0} (seam queue list shows them)")]
    NotFound(i64),
    #[error("queue item {id} is already {status}: a decision is final")]
    AlreadyDecided { id: i64, status: Status },
    #[error(
        "queue item {id}: the target branch {target} moved since the builder branched from it (it was at {base:.12}, it is now at {now:.12}): a fast-forward is impossible; reject this item and ask again"
    )]
    TargetMoved {
        id: i64,
        target: String,
        base: String,
        now: String,
    },
    #[error("queue item {id} was rejected by the Critic ({why}): it cannot be approved; reject it")]
    CriticRejected { id: i64, why: String },
    #[error("queue item {id}: {message}")]
    Apply { id: i64, message: String },
    #[error("queue item {id}: {cause}")]
    Git { id: i64, cause: GitError },
    #[error("the queue {}: {what}: {cause}", path.display())]
    Sql {
        path: PathBuf,
        what: &'static str,
        cause: rusqlite::Error,
    },
    #[error("cannot create {}: {cause}", path.display())]
    Create {
        path: PathBuf,
        cause: std::io::Error,
    },
    #[error(
        "the queue {} has schema version {found}, this seam knows {SCHEMA_VERSION}",
        path.display()
    )]
    Schema { path: PathBuf, found: i64 },
}

/// An item's status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Status {
    Pending,
    Approved,
    Rejected,
}

impl Status {
    pub fn as_str(self) -> &'static str {
        match self {
            Status::Pending => "pending",
            Status::Approved => "approved",
            Status::Rejected => "rejected",
        }
    }

    fn parse(s: &str) -> Status {
        match s {
            "approved" => Status::Approved,
            "rejected" => Status::Rejected,
            _ => Status::Pending,
        }
    }
}

impl std::fmt::Display for Status {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The Critic's verdict on a staged effect.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Verdict {
    Pass,
    Fail,
}

impl Verdict {
    pub fn as_str(self) -> &'static str {
        match self {
            Verdict::Pass => "pass",
            Verdict::Fail => "fail",
        }
    }
}

/// What an item stages, and what approving or rejecting it acts on.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "lowercase", deny_unknown_fields)]
pub enum Staged {
    /// A builder branch in its own worktree.
    Branch {
        /// The operator's repository (its top level).
        repo: PathBuf,
        /// The branch, in the staging repository (never in `repo`).
        branch: String,
        worktree: PathBuf,
        /// The commit the branch started from.
        base: String,
        /// The operator's branch it fast-forwards on approval.
        target: String,
        /// The staging repository holding the branch's objects
        /// (`<seam_home>/staging/repos/<slug>.git`); empty in an item staged
        /// by an older seam, which approve refuses.
        #[serde(default)]
        staging_repo: PathBuf,
        /// The branch's last commit when the turn ended, full hex; empty in
        /// an older item.
        #[serde(default)]
        tip: String,
        commits: usize,
        files: Vec<String>,
    },
    /// A scribe note.
    Note { title: String, text: String },
    /// A rendered diagram.
    Image { path: PathBuf },
}

impl Staged {
    pub fn kind(&self) -> &'static str {
        match self {
            Staged::Branch { .. } => "branch",
            Staged::Note { .. } => "note",
            Staged::Image { .. } => "image",
        }
    }
}

/// One item of the return queue.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct QueueItem {
    pub id: i64,
    /// `branch`, `note` or `image`.
    pub kind: String,
    pub turn: String,
    pub status: Status,
    /// One line: what the item changes.
    pub summary: String,
    pub verdict: Verdict,
    /// The Critic's findings, one line.
    pub critic: String,
    pub created: String,
    pub decided: Option<String>,
    /// The diff, the note or the image's source (scrubbed); empty in lists.
    #[serde(skip_serializing_if = "String::is_empty")]
    pub preview: String,
    pub staged: Staged,
}

/// A new item, before it has an id.
#[derive(Debug, Clone)]
pub struct NewItem {
    pub turn: String,
    pub summary: String,
    pub preview: String,
    pub verdict: Verdict,
    pub critic: String,
    pub staged: Staged,
}

/// What a decision did, one line for the operator.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Decided {
    pub id: i64,
    pub status: Status,
    pub message: String,
}

/// The queue's database.
#[derive(Debug)]
pub struct ReturnQueue {
    conn: Connection,
    path: PathBuf,
    /// seam's home, whose `staging/` holds what the items name.
    home: PathBuf,
}

/// `<seam_home>/agent/local.sqlite`.
pub fn queue_path(seam_home: &Path) -> PathBuf {
    seam_home::SeamHome::new(seam_home).agent_queue()
}

impl ReturnQueue {
    /// Opens (creating, owner-only) the queue in seam's home.
    pub fn open(seam_home: &Path) -> Result<ReturnQueue, QueueError> {
        let path = queue_path(seam_home);
        let dir = path.parent().unwrap_or(seam_home);
        let file_error = |e: seam_home::FileError| QueueError::Create {
            path: e.path,
            cause: e.source,
        };
        seam_home::file::create_private_dir(dir).map_err(file_error)?;
        seam_home::file::create_private_file(&path).map_err(file_error)?;
        let conn = Connection::open(&path).map_err(sql(&path, "opening"))?;
        let mut q = ReturnQueue {
            conn,
            path,
            home: seam_home.to_owned(),
        };
        q.init()?;
        Ok(q)
    }

    /// The queue if it exists, for reading only (`None` creates nothing).
    pub fn existing(seam_home: &Path) -> Result<Option<ReturnQueue>, QueueError> {
        if !queue_path(seam_home).exists() {
            return Ok(None);
        }
        ReturnQueue::open(seam_home).map(Some)
    }

    fn init(&mut self) -> Result<(), QueueError> {
        let path = self.path.clone();
        self.conn
            .busy_timeout(BUSY_TIMEOUT)
            .map_err(sql(&path, "setting the busy timeout"))?;
        self.conn
            .pragma_update(None, "journal_mode", "WAL")
            .map_err(sql(&path, "switching to WAL"))?;
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql(&path, "creating the schema"))?;
        let found: i64 = tx
            .query_row("PRAGMA user_version", [], |r| r.get(0))
            .map_err(sql(&path, "reading the schema version"))?;
        match found {
            0 => {
                tx.execute_batch(SCHEMA)
                    .map_err(sql(&path, "creating the schema"))?;
                tx.pragma_update(None, "user_version", SCHEMA_VERSION)
                    .map_err(sql(&path, "setting the schema version"))?;
            }
            SCHEMA_VERSION => {}
            found => return Err(QueueError::Schema { path, found }),
        }
        tx.commit().map_err(sql(&path, "creating the schema"))
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Adds an item, pending; returns it.
    pub fn push(&mut self, item: NewItem) -> Result<QueueItem, QueueError> {
        let detail = serde_json::to_string(&item.staged).unwrap_or_default();
        self.conn
            .execute(
                "INSERT INTO items (kind, turn, summary, preview, verdict, critic, status, created, detail)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, 'pending', ?7, ?8)",
                params![
                    item.staged.kind(),
                    item.turn,
                    item.summary,
                    item.preview,
                    item.verdict.as_str(),
                    item.critic,
                    now_ms(),
                    detail
                ],
            )
            .map_err(sql(&self.path, "adding an item"))?;
        let id = self.conn.last_insert_rowid();
        self.get(id)?.ok_or(QueueError::NotFound(id))
    }

    /// The newest `limit` items, newest first, without their previews.
    pub fn list(&self, limit: usize) -> Result<Vec<QueueItem>, QueueError> {
        let mut st = self
            .conn
            .prepare_cached(
                "SELECT id, kind, turn, status, summary, verdict, critic, created, decided, '', detail
                 FROM items ORDER BY id DESC LIMIT ?1",
            )
            .map_err(sql(&self.path, "listing items"))?;
        st.query_map([limit as i64], row)
            .and_then(|rows| rows.collect())
            .map_err(sql(&self.path, "listing items"))
    }

    /// One item with its preview.
    pub fn get(&self, id: i64) -> Result<Option<QueueItem>, QueueError> {
        self.conn
            .query_row(
                "SELECT id, kind, turn, status, summary, verdict, critic, created, decided, preview, detail
                 FROM items WHERE id = ?1",
                [id],
                row,
            )
            .optional()
            .map_err(sql(&self.path, "reading an item"))
    }

    /// Approves item `id`: see the module doc.
    pub fn approve(&mut self, id: i64) -> Result<Decided, QueueError> {
        self.decide(id, Status::Approved)
    }

    /// Rejects item `id`: see the module doc.
    pub fn reject(&mut self, id: i64) -> Result<Decided, QueueError> {
        self.decide(id, Status::Rejected)
    }

    fn decide(&mut self, id: i64, to: Status) -> Result<Decided, QueueError> {
        let path = self.path.clone();
        let tx = self
            .conn
            .transaction_with_behavior(TransactionBehavior::Immediate)
            .map_err(sql(&path, "starting a decision"))?;
        let item = tx
            .query_row(
                "SELECT id, kind, turn, status, summary, verdict, critic, created, decided, '', detail
                 FROM items WHERE id = ?1",
                [id],
                row,
            )
            .optional()
            .map_err(sql(&path, "reading an item"))?
            .ok_or(QueueError::NotFound(id))?;
        if item.status != Status::Pending {
            return Err(QueueError::AlreadyDecided {
                id,
                status: item.status,
            });
        }
        if to == Status::Approved && item.verdict == Verdict::Fail {
            return Err(QueueError::CriticRejected {
                id,
                why: item.critic.clone(),
            });
        }
        let message = match (&item.staged, to) {
            (Staged::Branch { .. }, Status::Approved) => {
                apply::approve_branch(id, &self.home, &item.staged)?
            }
            (Staged::Branch { .. }, _) => apply::discard_branch(id, &self.home, &item.staged),
            (Staged::Note { title, text }, Status::Approved) => {
                let note = add_note(&tx, id, title, text).map_err(sql(&path, "keeping a note"))?;
                format!("note kept (note {note}) and added to the graph")
            }
            (Staged::Note { .. }, _) => {
                tx.execute(
                    "UPDATE items SET preview = '', detail = ?2 WHERE id = ?1",
                    params![
                        id,
                        serde_json::to_string(&Staged::Note {
                            title: String::new(),
                            text: String::new()
                        })
                        .unwrap_or_default()
                    ],
                )
                .map_err(sql(&path, "discarding a note"))?;
                "note discarded".to_owned()
            }
            (Staged::Image { path }, Status::Approved) => {
                format!("image kept at {}", path.display())
            }
            (Staged::Image { path: file }, _) => {
                apply::remove_image(&self.home, file)
                    .map_err(|message| QueueError::Apply { id, message })?;
                "image deleted".to_owned()
            }
        };
        tx.execute(
            "UPDATE items SET status = ?2, decided = ?3 WHERE id = ?1",
            params![id, to.as_str(), now_ms()],
        )
        .map_err(sql(&path, "recording the decision"))?;
        tx.commit().map_err(sql(&path, "recording the decision"))?;
        Ok(Decided {
            id,
            status: to,
            message,
        })
    }

    /// The agent's approved notes, newest first.
    pub fn notes(&self, limit: usize) -> Result<Vec<(i64, String, String)>, QueueError> {
        let mut st = self
            .conn
            .prepare_cached("SELECT id, title, text FROM notes ORDER BY id DESC LIMIT ?1")
            .map_err(sql(&self.path, "listing notes"))?;
        st.query_map([limit as i64], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))
            .and_then(|rows| rows.collect())
            .map_err(sql(&self.path, "listing notes"))
    }

    /// A connection that can only read (the graph tool's: it never mutates).
    pub(crate) fn read_only(seam_home: &Path) -> Result<Option<Connection>, QueueError> {
        let path = queue_path(seam_home);
        if !path.exists() {
            return Ok(None);
        }
        let conn = Connection::open_with_flags(
            &path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )
        .map_err(sql(&path, "opening read-only"))?;
        conn.busy_timeout(BUSY_TIMEOUT)
            .map_err(sql(&path, "setting the busy timeout"))?;
        Ok(Some(conn))
    }
}

fn sql(path: &Path, what: &'static str) -> impl FnOnce(rusqlite::Error) -> QueueError + use<> {
    let path = path.to_owned();
    move |cause| QueueError::Sql { path, what, cause }
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<QueueItem> {
    let detail: String = r.get(10)?;
    let staged = serde_json::from_str(&detail).map_err(|e| {
        rusqlite::Error::FromSqlConversionFailure(10, rusqlite::types::Type::Text, Box::new(e))
    })?;
    let verdict: String = r.get(5)?;
    let status: String = r.get(3)?;
    let decided: Option<i64> = r.get(8)?;
    Ok(QueueItem {
        id: r.get(0)?,
        kind: r.get(1)?,
        turn: r.get(2)?,
        status: Status::parse(&status),
        summary: r.get(4)?,
        verdict: if verdict == "pass" {
            Verdict::Pass
        } else {
            Verdict::Fail
        },
        critic: r.get(6)?,
        created: rfc3339(r.get(7)?),
        decided: decided.map(rfc3339),
        preview: r.get(9)?,
        staged,
    })
}

/// Keeps a note and adds it to the graph: a `note` node, and a `mentions`
/// edge to a `topic` node for every `[[Name]]` in its text.
fn add_note(
    tx: &rusqlite::Transaction<'_>,
    item: i64,
    title: &str,
    text: &str,
) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO notes (at, title, text, item) VALUES (?1, ?2, ?3, ?4)",
        params![now_ms(), title, text, item],
    )?;
    let note = tx.last_insert_rowid();
    let name = if title.is_empty() {
        format!("note {note}")
    } else {
        title.to_owned()
    };
    let node = upsert_node(tx, &name, "note", text)?;
    for topic in mentions(text) {
        let t = upsert_node(tx, &topic, "topic", "")?;
        if t != node {
            tx.execute(
                "INSERT OR IGNORE INTO edges (src, dst, kind) VALUES (?1, ?2, 'mentions')",
                params![node, t],
            )?;
        }
    }
    Ok(note)
}

fn upsert_node(
    tx: &rusqlite::Transaction<'_>,
    name: &str,
    kind: &str,
    text: &str,
) -> rusqlite::Result<i64> {
    tx.execute(
        "INSERT INTO nodes (name, kind, text) VALUES (?1, ?2, ?3)
         ON CONFLICT(name) DO UPDATE SET text = CASE WHEN excluded.text = '' THEN nodes.text ELSE excluded.text END",
        params![name, kind, text],
    )?;
    tx.query_row("SELECT id FROM nodes WHERE name = ?1", [name], |r| r.get(0))
}

/// The `[[Name]]` links of a text, in order, unique.
pub(crate) fn mentions(text: &str) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut rest = text;
    while let Some(start) = rest.find("[[") {
        rest = &rest[start + 2..];
        let Some(end) = rest.find("]]") else { break };
        let name = rest[..end].trim();
        if !name.is_empty()
            && name.len() <= 200
            && !name.contains('\n')
            && !out.iter().any(|n| n == name)
        {
            out.push(name.to_owned());
        }
        rest = &rest[end + 2..];
    }
    out
}
