//! Checking a ledger: the chain, every hash and signature, and the signed head.

use std::fmt;
use std::path::Path;
use std::thread::sleep;
use std::time::{Duration, Instant};

use rusqlite::Connection;
use serde::Serialize;

use crate::digest::Sha256Digest;
use crate::error::{LedgerError, sql_err};
use crate::fsutil::writer_is_live;
use crate::head::{HeadFileState, SignedHead, read_head_file};
use crate::keys::LedgerPublicKey;
use crate::paths::LedgerPaths;
use crate::store::{DecodedRow, rows_after};

/// What is wrong at the first bad place of a ledger.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
#[serde(rename_all = "snake_case")]
pub enum FailureKind {
    /// A row cannot be decoded (a column of the wrong type or size).
    Malformed,
    /// The seq is not the one after the previous record's: records are missing
    /// (deleted) or out of place.
    Gap,
    /// `prev_hash` is not the previous record's hash: records were removed,
    /// swapped or spliced in.
    BrokenChain,
    /// The stored hash is not the hash of the record's fields, or the params
    /// are not the ones `params_sha256` names: the record was edited.
    BadHash,
    /// The signature over the hash is not the ledger key's: the record was
    /// re-signed with another key, or forged.
    BadSignature,
    /// The head file is missing, unreadable, or not signed by the ledger key.
    BadHead,
    /// The record at the head's seq does not have the head's hash.
    HeadMismatch,
    /// The signed head names a seq beyond the last record: records were
    /// removed from the end.
    Truncated,
    /// Records continue after the head's seq: the head file was rolled back to
    /// an older one, or the writer stopped uncleanly before it rewrote the head
    /// (opening the ledger re-signs it after checking those records).
    HeadBehind,
}

impl fmt::Display for FailureKind {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            FailureKind::Malformed => "malformed record",
            FailureKind::Gap => "gap",
            FailureKind::BrokenChain => "broken chain",
            FailureKind::BadHash => "bad hash",
            FailureKind::BadSignature => "bad signature",
            FailureKind::BadHead => "bad head",
            FailureKind::HeadMismatch => "head mismatch",
            FailureKind::Truncated => "truncated",
            FailureKind::HeadBehind => "head behind",
        })
    }
}

/// The first thing found wrong with a ledger: at which seq, what kind, and a
/// sentence that says what was expected and what was found.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, thiserror::Error)]
#[error("seq {seq}: {kind}: {message}")]
pub struct VerifyFailure {
    pub seq: u64,
    pub kind: FailureKind,
    pub message: String,
}

/// A ledger that verified.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VerifyReport {
    /// Records checked: 1..=records, contiguous, chained, hashed and signed,
    /// and covered by `head` (`head.seq == records`). With a live writer,
    /// records appended after verification began may be beyond it.
    pub records: u64,
    /// The signed head, checked against record `records`.
    pub head: SignedHead,
}

/// Why `verify` did not succeed: the ledger is wrong ([`VerifyError::Failed`],
/// `seam ledger verify` exits 4), or it could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("ledger does not verify: {0}")]
    Failed(VerifyFailure),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
}

fn failure(seq: u64, kind: FailureKind, message: String) -> VerifyError {
    VerifyError::Failed(VerifyFailure { seq, kind, message })
}

/// Walks records in seq order, checking each against the one before it.
pub(crate) struct ChainChecker<'k> {
    key: &'k LedgerPublicKey,
    last_seq: u64,
    last_hash: Sha256Digest,
}

impl<'k> ChainChecker<'k> {
    /// Starts after a record already trusted (or at (0, zeros)).
    pub(crate) fn after(key: &'k LedgerPublicKey, seq: u64, hash: Sha256Digest) -> Self {
        ChainChecker {
            key,
            last_seq: seq,
            last_hash: hash,
        }
    }

    pub(crate) fn last_seq(&self) -> u64 {
        self.last_seq
    }

    pub(crate) fn check(&mut self, row: DecodedRow) -> Result<(), VerifyFailure> {
        let expected = self.last_seq + 1;
        let fail = |seq: u64, kind, message| VerifyFailure { seq, kind, message };
        let row = row.map_err(|defect| {
            let seq = defect
                .seq
                .and_then(|s| u64::try_from(s).ok())
                .unwrap_or(expected);
            fail(seq, FailureKind::Malformed, defect.reason)
        })?;
        if row.seq != expected as i64 {
            let message = if row.seq > expected as i64 {
                format!(
                    "expected seq {expected}, found {}: records {expected}..={} are missing",
                    row.seq,
                    row.seq - 1
                )
            } else {
                format!("expected seq {expected}, found {} again", row.seq)
            };
            return Err(fail(expected, FailureKind::Gap, message));
        }
        let r = &row.record;
        if r.prev_hash != self.last_hash {
            return Err(fail(
                expected,
                FailureKind::BrokenChain,
                format!(
                    "prev_hash {} is not the hash {} of record {}",
                    r.prev_hash, self.last_hash, self.last_seq
                ),
            ));
        }
        let params_digest = Sha256Digest::of(row.params_text.as_bytes());
        if params_digest != r.params_sha256 {
            return Err(fail(
                expected,
                FailureKind::BadHash,
                format!(
                    "params hash to {params_digest}, the record says {}",
                    r.params_sha256
                ),
            ));
        }
        let recomputed = r.expected_hash();
        if recomputed != r.hash {
            return Err(fail(
                expected,
                FailureKind::BadHash,
                format!(
                    "the record's fields hash to {recomputed}, its stored hash is {}",
                    r.hash
                ),
            ));
        }
        if !self.key.verifies(r.hash.as_bytes(), &r.signature) {
            return Err(fail(
                expected,
                FailureKind::BadSignature,
                format!("the signature over {} is not by key {}", r.hash, self.key),
            ));
        }
        self.last_seq = expected;
        self.last_hash = r.hash;
        Ok(())
    }
}

const CHUNK: usize = 2048;

/// Checks every row after the checker's position up to seq `upto`; returns how many.
pub(crate) fn check_rows(
    conn: &Connection,
    db: &Path,
    checker: &mut ChainChecker<'_>,
    upto: u64,
) -> Result<u64, VerifyError> {
    let mut count = 0;
    loop {
        let rows = rows_after(conn, db, checker.last_seq(), upto, CHUNK)?;
        let n = rows.len();
        for row in rows {
            checker.check(row).map_err(VerifyError::Failed)?;
            count += 1;
        }
        if n < CHUNK {
            return Ok(count);
        }
    }
}

/// The stored hash of record `seq` ((0 → zeros), `None` if there is no such row.
pub(crate) fn stored_hash_at(
    conn: &Connection,
    db: &Path,
    seq: u64,
) -> Result<Option<Sha256Digest>, LedgerError> {
    if seq == 0 {
        return Ok(Some(Sha256Digest::ZERO));
    }
    let hash: Option<Vec<u8>> = conn
        .query_row(
            "SELECT hash FROM records WHERE seq = ?1",
            [i64::try_from(seq).unwrap_or(i64::MAX)],
            |r| r.get(0),
        )
        .map(Some)
        .or_else(|e| match e {
            rusqlite::Error::QueryReturnedNoRows => Ok(None),
            e => Err(e),
        })
        .map_err(sql_err(db))?;
    Ok(hash.and_then(|h| Sha256Digest::try_from(&h[..]).ok()))
}

/// Reads the head file and checks its signature.
pub(crate) fn read_signed_head(
    head_file: &Path,
    key: &LedgerPublicKey,
    records_exist: bool,
) -> Result<SignedHead, VerifyError> {
    let first = u64::from(records_exist);
    match read_head_file(head_file)? {
        HeadFileState::Missing => Err(failure(
            first,
            FailureKind::BadHead,
            format!("there is no head file at {}", head_file.display()),
        )),
        HeadFileState::Malformed(reason) => Err(failure(
            first,
            FailureKind::BadHead,
            format!(
                "the head file {} is malformed: {reason}",
                head_file.display()
            ),
        )),
        HeadFileState::Present(head) if !head.is_signed_by(key) => Err(failure(
            head.seq,
            FailureKind::BadHead,
            format!(
                "the head file {} (seq {}) is not signed by key {key}",
                head_file.display(),
                head.seq
            ),
        )),
        HeadFileState::Present(head) => Ok(head),
    }
}

/// Compares a checked head with the rows: the record at `head.seq` must carry
/// `head.hash`, and the head must not be beyond the last row.
pub(crate) fn check_head_against_rows(
    conn: &Connection,
    db: &Path,
    head: &SignedHead,
    last_seq: u64,
) -> Result<(), VerifyError> {
    if head.seq > last_seq {
        return Err(failure(
            last_seq + 1,
            FailureKind::Truncated,
            format!(
                "the signed head names seq {}, but the ledger ends at seq {last_seq}: \
                 records {}..={} were removed",
                head.seq,
                last_seq + 1,
                head.seq
            ),
        ));
    }
    let at = stored_hash_at(conn, db, head.seq)?;
    if at != Some(head.hash) {
        return Err(failure(
            head.seq,
            FailureKind::HeadMismatch,
            format!(
                "the signed head says record {} has hash {}, the record's hash is {}",
                head.seq,
                head.hash,
                at.map_or_else(|| "missing".to_owned(), |h| h.to_string())
            ),
        ));
    }
    Ok(())
}

/// How long `verify` waits for a live writer's head to catch up with the rows
/// it has just checked (the head is rewritten asynchronously after commits).
const LIVE_HEAD_WAIT: Duration = Duration::from_secs(3);

/// Full verification of the ledger in `paths` with `key`: every row from seq 1,
/// then the head. See [`crate::LedgerReader::verify`].
pub(crate) fn verify_ledger(
    conn: &Connection,
    paths: &LedgerPaths,
    key: &LedgerPublicKey,
) -> Result<VerifyReport, VerifyError> {
    let db = &paths.db_file;
    let (min, max): (Option<i64>, Option<i64>) = conn
        .query_row("SELECT min(seq), max(seq) FROM records", [], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .map_err(sql_err(db))?;
    if let Some(min) = min.filter(|m| *m < 1) {
        return Err(failure(
            0,
            FailureKind::Gap,
            format!("a record has seq {min}; seqs start at 1"),
        ));
    }
    // The rows present now are the target; a live writer's later appends are
    // only checked as far as the head that covers the target needs.
    let target = max.and_then(|m| u64::try_from(m).ok()).unwrap_or(0);
    let mut checker = ChainChecker::after(key, 0, Sha256Digest::ZERO);
    check_rows(conn, db, &mut checker, target)?;
    let live = writer_is_live(&paths.lock_file);
    let deadline = Instant::now() + if live { LIVE_HEAD_WAIT } else { Duration::ZERO };
    loop {
        let head = read_signed_head(&paths.head_file, key, checker.last_seq() > 0)?;
        if head.seq > checker.last_seq() {
            // Rows a live writer committed after we started, up to the head.
            check_rows(conn, db, &mut checker, head.seq)?;
        }
        check_head_against_rows(conn, db, &head, checker.last_seq())?;
        if head.seq >= target {
            return Ok(VerifyReport {
                records: checker.last_seq(),
                head,
            });
        }
        if Instant::now() < deadline {
            sleep(Duration::from_millis(10));
            continue;
        }
        return Err(failure(
            head.seq + 1,
            FailureKind::HeadBehind,
            format!(
                "the signed head names seq {}, but records continue to seq {target}: \
                 the head file was rolled back, or the writer stopped uncleanly before \
                 it rewrote the head (opening the ledger re-signs it after checking \
                 records {}..={target})",
                head.seq,
                head.seq + 1
            ),
        ));
    }
}
