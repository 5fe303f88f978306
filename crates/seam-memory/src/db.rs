//! Opening a store: owner-only files, WAL, a schema version checked on every open.

use std::path::Path;
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use crate::MemoryError;

/// How long a writer or reader waits for another process's lock before failing.
const BUSY_TIMEOUT: Duration = Duration::from_secs(10);

/// Opens (creating when missing) the store at `path` with `schema` at `version`.
/// Maps a SQLite error of the store at `path` to a [`MemoryError`] that names the store
/// and what was being done.
pub(crate) fn sql_error<'p>(
    path: &'p Path,
    what: &'static str,
) -> impl FnOnce(rusqlite::Error) -> MemoryError + 'p {
    move |cause| MemoryError::Sql {
        path: path.to_owned(),
        what,
        cause,
    }
}

pub(crate) fn open(path: &Path, schema: &str, version: i64) -> Result<Connection, MemoryError> {
    // Made owner-only before SQLite sees it (seam_home::file); SQLite gives its -wal and -shm
    // files the mode of the database file.
    let file_error = |e: seam_home::FileError| MemoryError::Create {
        path: e.path,
        cause: e.source,
    };
    if let Some(dir) = path.parent() {
        seam_home::file::ensure_private_dir(dir).map_err(file_error)?;
    }
    seam_home::file::create_private_file(path).map_err(file_error)?;
    seam_home::file::narrow_mode(path, seam_home::file::OWNER_ONLY).map_err(file_error)?;

    let mut conn = Connection::open(path).map_err(|cause| MemoryError::Open {
        path: path.to_owned(),
        cause,
    })?;
    let sql = |what: &'static str| {
        let path = path.to_owned();
        move |cause| MemoryError::Sql { path, what, cause }
    };
    conn.busy_timeout(BUSY_TIMEOUT)
        .map_err(sql("setting the busy timeout"))?;
    conn.pragma_update(None, "journal_mode", "WAL")
        .map_err(sql("switching to WAL"))?;
    conn.execute_batch("PRAGMA synchronous = NORMAL; PRAGMA foreign_keys = ON;")
        .map_err(sql("setting pragmas"))?;

    let found: i64 = conn
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(sql("reading the schema version"))?;
    if found == version {
        return Ok(conn);
    }
    if found != 0 {
        return Err(MemoryError::Schema {
            path: path.to_owned(),
            found,
            expected: version,
        });
    }
    // A new store: made in one transaction, so two processes opening it at once cannot both
    // create it.
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sql("starting the schema transaction"))?;
    let again: i64 = tx
        .query_row("PRAGMA user_version", [], |r| r.get(0))
        .map_err(sql("reading the schema version"))?;
    if again == 0 {
        tx.execute_batch(schema)
            .map_err(sql("creating the schema"))?;
        tx.execute_batch(&format!("PRAGMA user_version = {version}"))
            .map_err(sql("writing the schema version"))?;
    } else if again != version {
        return Err(MemoryError::Schema {
            path: path.to_owned(),
            found: again,
            expected: version,
        });
    }
    tx.commit().map_err(sql("committing the schema"))?;
    Ok(conn)
}
