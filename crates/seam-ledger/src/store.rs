//! The SQLite side: schema, connection settings, rows in and out.

use std::path::Path;

use rusqlite::{Connection, OpenFlags, Row, params};

use crate::digest::{Ed25519Signature, Sha256Digest};
use crate::error::{LedgerError, sql_err};
use crate::head::ChainLink;
use crate::record::{Decision, Entry, Record};
use crate::time::Timestamp;

pub(crate) const FORMAT: &str = "seam-ledger/v1";

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
) STRICT;
CREATE TABLE IF NOT EXISTS records (
    seq INTEGER PRIMARY KEY,
    time_unix_nanos INTEGER NOT NULL,
    invocation_id TEXT NOT NULL,
    turn_id TEXT,
    tool TEXT NOT NULL,
    tool_version TEXT NOT NULL,
    params TEXT NOT NULL,
    params_sha256 BLOB NOT NULL,
    decision TEXT NOT NULL,
    refusal_code TEXT,
    output_sha256 BLOB,
    tainted INTEGER NOT NULL,
    scrubbed TEXT NOT NULL,
    prev_hash BLOB NOT NULL,
    hash BLOB NOT NULL,
    signature BLOB NOT NULL
) STRICT;
";

pub(crate) const COLUMNS: &str = "seq, time_unix_nanos, invocation_id, turn_id, tool, tool_version, \
     params, params_sha256, decision, refusal_code, output_sha256, tainted, scrubbed, \
     prev_hash, hash, signature";

/// Opens the database for the writer: WAL, `synchronous=FULL` (every commit
/// fsyncs the WAL before it returns), schema created if missing.
pub(crate) fn open_writer(db: &Path) -> Result<Connection, LedgerError> {
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_WRITE | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql_err(db))?;
    let mode: String = conn
        .pragma_update_and_check(None, "journal_mode", "WAL", |row| row.get(0))
        .map_err(sql_err(db))?;
    if !mode.eq_ignore_ascii_case("wal") {
        return Err(LedgerError::UnexpectedSchema {
            path: db.to_owned(),
            reason: format!("journal mode stays {mode:?}, WAL was asked for"),
        });
    }
    conn.execute_batch(
        "PRAGMA synchronous = FULL;
         PRAGMA trusted_schema = OFF;
         PRAGMA busy_timeout = 10000;",
    )
    .map_err(sql_err(db))?;
    conn.execute_batch(SCHEMA).map_err(sql_err(db))?;
    conn.execute(
        "INSERT OR IGNORE INTO meta (key, value) VALUES ('format', ?1)",
        [FORMAT],
    )
    .map_err(sql_err(db))?;
    check_schema(&conn, db)?;
    Ok(conn)
}

/// Opens the database read-only (no key, no lock needed).
pub(crate) fn open_reader(db: &Path) -> Result<Connection, LedgerError> {
    if !db.exists() {
        return Err(LedgerError::NoLedger {
            path: db.to_owned(),
        });
    }
    let conn = Connection::open_with_flags(
        db,
        OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
    )
    .map_err(sql_err(db))?;
    conn.execute_batch(
        "PRAGMA trusted_schema = OFF;
         PRAGMA query_only = ON;
         PRAGMA busy_timeout = 10000;",
    )
    .map_err(sql_err(db))?;
    check_schema(&conn, db)?;
    Ok(conn)
}

/// The format tag must be ours, and no trigger may exist: a trigger planted in
/// the file would run inside the writer's own transactions.
fn check_schema(conn: &Connection, db: &Path) -> Result<(), LedgerError> {
    let format: Option<String> = conn
        .query_row("SELECT value FROM meta WHERE key = 'format'", [], |r| {
            r.get(0)
        })
        .ok();
    if format.as_deref() != Some(FORMAT) {
        return Err(LedgerError::UnexpectedSchema {
            path: db.to_owned(),
            reason: format!("format tag is {format:?}, expected {FORMAT:?}"),
        });
    }
    let triggers: i64 = conn
        .query_row(
            "SELECT count(*) FROM sqlite_master WHERE type = 'trigger'",
            [],
            |r| r.get(0),
        )
        .map_err(sql_err(db))?;
    if triggers != 0 {
        return Err(LedgerError::UnexpectedSchema {
            path: db.to_owned(),
            reason: format!("it holds {triggers} trigger(s); a ledger has none"),
        });
    }
    Ok(())
}

/// The last row's (seq, hash), unchecked, or the origin for an empty ledger.
pub(crate) fn last_link(conn: &Connection, db: &Path) -> Result<ChainLink, LedgerError> {
    let row: Option<(i64, Vec<u8>)> = conn
        .query_row(
            "SELECT seq, hash FROM records ORDER BY seq DESC LIMIT 1",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })
        .map_err(sql_err(db))?;
    match row {
        None => Ok(ChainLink::ORIGIN),
        Some((seq, hash)) => {
            let malformed = |reason: String| LedgerError::MalformedRow {
                path: db.to_owned(),
                seq,
                reason,
            };
            let seq_u = u64::try_from(seq).map_err(|_| malformed("negative seq".into()))?;
            let hash = Sha256Digest::try_from(&hash[..])
                .map_err(|len| malformed(format!("hash is {len} bytes, not 32")))?;
            Ok(ChainLink::new(seq_u, hash))
        }
    }
}

pub(crate) fn insert(
    tx: &rusqlite::Transaction<'_>,
    record: &Record,
    params_text: &str,
) -> rusqlite::Result<()> {
    let e = &record.entry;
    // The `refusal_code` column holds a refusal's code, or a consent's stored text.
    let consent_text;
    let (decision, code) = match &e.decision {
        Decision::Admitted => ("admitted", None),
        Decision::Refused { code } => ("refused", Some(code.as_str())),
        Decision::Consent(c) => {
            consent_text = c.stored_text();
            ("consent", Some(consent_text.as_str()))
        }
    };
    let scrubbed = scrubbed_json(&e.scrubbed);
    let mut stmt = tx.prepare_cached(
        "INSERT INTO records (seq, time_unix_nanos, invocation_id, turn_id, tool, tool_version, \
         params, params_sha256, decision, refusal_code, output_sha256, tainted, scrubbed, \
         prev_hash, hash, signature) \
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16)",
    )?;
    stmt.execute(params![
        record.seq as i64,
        record.time.unix_nanos(),
        e.invocation_id,
        e.turn_id,
        e.tool,
        e.tool_version,
        params_text,
        &record.params_sha256.0[..],
        decision,
        code,
        e.output_sha256.as_ref().map(|d| &d.0[..]),
        e.tainted,
        scrubbed,
        &record.prev_hash.0[..],
        &record.hash.0[..],
        &record.signature.0[..],
    ])?;
    Ok(())
}

/// The stored text of the scrubbed shape ids: a compact JSON array.
fn scrubbed_json(scrubbed: &[String]) -> String {
    serde_json::Value::from(scrubbed).to_string()
}

/// A row as stored, before anything is trusted about it.
pub(crate) struct StoredRow {
    pub seq: i64,
    pub params_text: String,
    pub record: Record,
}

/// Why a stored row cannot be decoded: its seq (if that much could be read)
/// and what is wrong.
pub(crate) struct RowDefect {
    pub seq: Option<i64>,
    pub reason: String,
}

/// A row decoded, or why it could not be.
pub(crate) type DecodedRow = Result<StoredRow, RowDefect>;

/// Decodes a row selected with [`COLUMNS`].
pub(crate) fn decode_row(row: &Row<'_>) -> DecodedRow {
    let seq: i64 = row.get(0).map_err(|e| RowDefect {
        seq: None,
        reason: format!("seq is unreadable: {e}"),
    })?;
    let fail = |what: &str, e: &dyn std::fmt::Display| RowDefect {
        seq: Some(seq),
        reason: format!("{what}: {e}"),
    };
    let get_text = |i: usize, what: &str| -> Result<String, RowDefect> {
        row.get::<_, String>(i).map_err(|e| fail(what, &e))
    };
    let get_blob = |i: usize, what: &str| -> Result<Vec<u8>, RowDefect> {
        row.get::<_, Vec<u8>>(i).map_err(|e| fail(what, &e))
    };
    let digest = |bytes: Vec<u8>, what: &str| {
        Sha256Digest::try_from(&bytes[..])
            .map_err(|len| fail(what, &format!("{len} bytes, not 32")))
    };
    let seq_u = u64::try_from(seq).map_err(|e| fail("seq", &e))?;
    let time: i64 = row.get(1).map_err(|e| fail("time", &e))?;
    let invocation_id = get_text(2, "invocation_id")?;
    let turn_id: Option<String> = row.get(3).map_err(|e| fail("turn_id", &e))?;
    let tool = get_text(4, "tool")?;
    let tool_version = get_text(5, "tool_version")?;
    let params_text = get_text(6, "params")?;
    let params: serde_json::Value =
        serde_json::from_str(&params_text).map_err(|e| fail("params", &e))?;
    let params_sha256 = digest(get_blob(7, "params_sha256")?, "params_sha256")?;
    let refusal_code: Option<String> = row.get(9).map_err(|e| fail("refusal_code", &e))?;
    let decision = match (get_text(8, "decision")?.as_str(), refusal_code) {
        ("admitted", None) => Decision::Admitted,
        ("admitted", Some(_)) => return Err(fail("refusal_code", &"set on an admitted call")),
        ("refused", Some(code)) => Decision::Refused { code },
        ("refused", None) => return Err(fail("refusal_code", &"missing for a refusal")),
        ("consent", Some(text)) => {
            let consent: crate::record::Consent =
                serde_json::from_str(&text).map_err(|e| fail("consent", &e))?;
            // Only the form the writer stores (as for the scrubbed list below).
            if consent.stored_text() != text {
                return Err(fail("consent", &"not in the form the writer stores"));
            }
            Decision::Consent(consent)
        }
        ("consent", None) => return Err(fail("refusal_code", &"missing for a consent")),
        (other, _) => {
            return Err(fail(
                "decision",
                &format!(
                    "{:?} is not admitted, refused or consent",
                    crate::clipped(other, 40)
                ),
            ));
        }
    };
    let output_sha256 = row
        .get::<_, Option<Vec<u8>>>(10)
        .map_err(|e| fail("output_sha256", &e))?
        .map(|b| digest(b, "output_sha256"))
        .transpose()?;
    let tainted = match row.get::<_, i64>(11).map_err(|e| fail("tainted", &e))? {
        0 => false,
        1 => true,
        other => return Err(fail("tainted", &format!("{other} is not 0 or 1"))),
    };
    let scrubbed_text = get_text(12, "scrubbed")?;
    let scrubbed: Vec<String> =
        serde_json::from_str(&scrubbed_text).map_err(|e| fail("scrubbed", &e))?;
    // Only the form the writer stores: another text for the same list would
    // be a change the hash (over the list, not the text) cannot see.
    if scrubbed_json(&scrubbed) != scrubbed_text {
        return Err(fail("scrubbed", &"not in the form the writer stores"));
    }
    let prev_hash = digest(get_blob(13, "prev_hash")?, "prev_hash")?;
    let hash = digest(get_blob(14, "hash")?, "hash")?;
    let signature = Ed25519Signature::try_from(&get_blob(15, "signature")?[..])
        .map_err(|len| fail("signature", &format!("{len} bytes, not 64")))?;
    Ok(StoredRow {
        seq,
        params_text,
        record: Record {
            seq: seq_u,
            time: Timestamp::from_unix_nanos(time),
            entry: Entry {
                invocation_id,
                turn_id,
                tool,
                tool_version,
                params,
                decision,
                output_sha256,
                tainted,
                scrubbed,
            },
            params_sha256,
            prev_hash,
            hash,
            signature,
        },
    })
}

/// Up to `limit` rows with `after < seq <= upto`, in seq order.
pub(crate) fn rows_after(
    conn: &Connection,
    db: &Path,
    after: u64,
    upto: u64,
    limit: usize,
) -> Result<Vec<DecodedRow>, LedgerError> {
    let mut stmt = conn
        .prepare_cached(&format!(
            "SELECT {COLUMNS} FROM records WHERE seq > ?1 AND seq <= ?2 ORDER BY seq LIMIT ?3"
        ))
        .map_err(sql_err(db))?;
    let after = i64::try_from(after).unwrap_or(i64::MAX);
    let upto = i64::try_from(upto).unwrap_or(i64::MAX);
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let mut rows = stmt
        .query(params![after, upto, limit])
        .map_err(sql_err(db))?;
    let mut out = Vec::new();
    while let Some(row) = rows.next().map_err(sql_err(db))? {
        out.push(decode_row(row));
    }
    Ok(out)
}

/// Turns a row decoding failure into a read error.
pub(crate) fn row_or_err(db: &Path, row: DecodedRow) -> Result<Record, LedgerError> {
    row.map(|r| r.record)
        .map_err(|defect| LedgerError::MalformedRow {
            path: db.to_owned(),
            seq: defect.seq.unwrap_or(-1),
            reason: defect.reason,
        })
}
