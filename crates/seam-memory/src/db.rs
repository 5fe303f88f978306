//! Opening a store: owner-only files, WAL, a schema version checked on every open.

use std::fs::{DirBuilder, OpenOptions, Permissions};
use std::os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt};
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
    let create = |cause| MemoryError::Create {
        path: path.to_owned(),
        cause,
    };
    if let Some(dir) = path.parent() {
        if !dir.is_dir() {
            DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(dir)
                .map_err(|e| MemoryError::Create {
                    path: dir.to_owned(),
                    cause: e,
                })?;
        }
        restrict(dir, 0o700).map_err(|e| MemoryError::Create {
            path: dir.to_owned(),
            cause: e,
        })?;
    }
    // Made owner-only before SQLite sees it; SQLite gives its -wal and -shm files the mode of
    // the database file.
    OpenOptions::new()
        .create(true)
        .append(true)
        .mode(0o600)
        .open(path)
        .map_err(create)?;
    restrict(path, 0o600).map_err(create)?;

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

/// Takes away any permission bit beyond `mode` (a store made by hand, or by an older seam).
fn restrict(path: &Path, mode: u32) -> std::io::Result<()> {
    let meta = std::fs::metadata(path)?;
    let current = meta.permissions().mode() & 0o777;
    if current & !mode != 0 {
        std::fs::set_permissions(path, Permissions::from_mode(current & mode))?;
    }
    Ok(())
}
