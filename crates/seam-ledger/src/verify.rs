//! Checking a ledger: the chain, every hash and signature, and the signed head.

use std::fmt;
use std::path::Path;

use rusqlite::Connection;
use serde::Serialize;

use crate::anchor::{AnchorError, HeadAnchor};
use crate::digest::Sha256Digest;
use crate::error::{LedgerError, sql_err};
use crate::head::{ChainLink, CurrentHead, HeadFileState, SignedHead, read_head_file, select_head};
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
    /// The head file is missing, of another format, or has no slot that is
    /// whole and signed by the ledger key.
    BadHead,
    /// The record at the head's floor, or at its ceiling when the ledger ends
    /// there, does not have the hash the head names.
    HeadMismatch,
    /// The signed head's floor (a record known committed) is beyond the last
    /// record: records were removed from the end.
    Truncated,
    /// Records continue past the signed head's ceiling. The writer signs a
    /// ceiling before it commits a batch, so no crash leaves records beyond
    /// it: the head file was rolled back to an older one.
    HeadBehind,
    /// The ledger ends before an external anchor's seq, or its signed head is older than the
    /// anchor's: records were cut off and an older head file put back (a consistent rollback).
    BehindAnchor,
    /// The record at an external anchor's seq does not have the anchor's hash: the ledger was
    /// rewritten from there on.
    AnchorMismatch,
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
            FailureKind::BehindAnchor => "behind the anchor",
            FailureKind::AnchorMismatch => "anchor mismatch",
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
    /// and within the signed head (`head.seq <= records <= ceiling`). With a
    /// live writer, records appended after verification began may be beyond it.
    pub records: u64,
    /// Where the signed head seals the chain (its floor): the record at
    /// `head.seq` has `head.hash`, and every record up to it was committed
    /// when the head was written. Equal to `records` after a clean stop.
    pub head: ChainLink,
    /// The head slot in force, as read and checked.
    pub signed_head: SignedHead,
    /// `records - head.seq`: records after the sealed floor, within the
    /// head's ceiling. Without a live writer these were written during an
    /// unclean stop (the process died before it sealed them: they verify, but
    /// the head cannot tell whether more followed them and were cut off); with
    /// a live writer, they were committed a moment ago and are sealed shortly.
    pub unsealed: u64,
    /// Whether a writer held the ledger's lock when it was verified.
    pub writer_live: bool,
}

/// Why `verify` did not succeed: the ledger is wrong ([`VerifyError::Failed`],
/// `seam ledger verify` exits 4), or it could not be read at all.
#[derive(Debug, thiserror::Error)]
pub enum VerifyError {
    #[error("ledger does not verify: {0}")]
    Failed(VerifyFailure),
    #[error(transparent)]
    Ledger(#[from] LedgerError),
    /// The anchor to verify against could not be read, or is not the ledger's.
    #[error(transparent)]
    Anchor(#[from] AnchorError),
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

    pub(crate) fn last_link(&self) -> ChainLink {
        ChainLink::new(self.last_seq, self.last_hash)
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

/// Reads the head file and takes its newest slot signed by `key`.
pub(crate) fn read_signed_head(
    head_file: &Path,
    key: &LedgerPublicKey,
    records_exist: bool,
) -> Result<CurrentHead, VerifyError> {
    let first = u64::from(records_exist);
    match read_head_file(head_file)? {
        HeadFileState::Missing => Err(failure(
            first,
            FailureKind::BadHead,
            format!("there is no head file at {}", head_file.display()),
        )),
        HeadFileState::Malformed(defect) => Err(failure(
            first,
            FailureKind::BadHead,
            format!(
                "the head file {} is malformed: {defect}",
                head_file.display()
            ),
        )),
        HeadFileState::Slots(slots) => select_head(&slots, key).map_err(|none| {
            failure(
                none.claimed_seq.unwrap_or(first),
                FailureKind::BadHead,
                format!(
                    "the head file {} has no usable slot: {}",
                    head_file.display(),
                    none.reason
                ),
            )
        }),
    }
}

/// Compares a checked head with the end of the ledger, `last` (the last
/// record, or where verification stopped): the floor must not be beyond it
/// and must name its record's hash; `last` must not be beyond the ceiling,
/// and if it is the ceiling, must have the ceiling's hash.
pub(crate) fn check_head_position(
    conn: &Connection,
    db: &Path,
    head: &SignedHead,
    last: ChainLink,
) -> Result<(), VerifyError> {
    let (floor, ceiling) = (head.floor, head.ceiling);
    if floor.seq > last.seq {
        return Err(failure(
            last.seq + 1,
            FailureKind::Truncated,
            format!(
                "the signed head seals seq {}, but the ledger ends at seq {}: \
                 records {}..={} were removed",
                floor.seq,
                last.seq,
                last.seq + 1,
                floor.seq
            ),
        ));
    }
    let at_floor = if floor.seq == last.seq {
        Some(last.hash)
    } else {
        stored_hash_at(conn, db, floor.seq)?
    };
    if at_floor != Some(floor.hash) {
        return Err(failure(
            floor.seq,
            FailureKind::HeadMismatch,
            format!(
                "the signed head says record {} has hash {}, the record's hash is {}",
                floor.seq,
                floor.hash,
                at_floor.map_or_else(|| "missing".to_owned(), |h| h.to_string())
            ),
        ));
    }
    if last.seq > ceiling.seq {
        return Err(failure(
            ceiling.seq + 1,
            FailureKind::HeadBehind,
            format!(
                "records continue to seq {} after the signed head's ceiling at seq {}: the \
                 head file was rolled back (the writer signs a ceiling before it commits, \
                 so a crash cannot leave records beyond it)",
                last.seq, ceiling.seq
            ),
        ));
    }
    if last.seq == ceiling.seq && last.hash != ceiling.hash {
        return Err(failure(
            last.seq,
            FailureKind::HeadMismatch,
            format!(
                "the signed head's ceiling says record {} has hash {}, the record's hash is {}",
                last.seq, ceiling.hash, last.hash
            ),
        ));
    }
    Ok(())
}

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
    // The rows present now are the target. The head is read after them, so
    // a live writer's head covers them (it only ever moves forward).
    let target = max.and_then(|m| u64::try_from(m).ok()).unwrap_or(0);
    let mut checker = ChainChecker::after(key, 0, Sha256Digest::ZERO);
    check_rows(conn, db, &mut checker, target)?;
    let writer_live = seam_home::Lock::is_held(&paths.lock_file);
    let head = read_signed_head(&paths.head_file, key, checker.last_seq() > 0)?.head;
    if head.floor.seq > checker.last_seq() {
        // Rows a live writer committed and sealed after we started.
        check_rows(conn, db, &mut checker, head.floor.seq)?;
    }
    let last = checker.last_link();
    check_head_position(conn, db, &head, last)?;
    Ok(VerifyReport {
        records: last.seq,
        head: head.floor,
        signed_head: head,
        unsealed: last.seq - head.floor.seq,
        writer_live,
    })
}

/// Holds a verified ledger to an external anchor (see
/// [`crate::LedgerReader::verify_against`]); `report` is the ledger's own verification.
pub(crate) fn check_against_anchor(
    conn: &Connection,
    db: &Path,
    key: &LedgerPublicKey,
    report: &VerifyReport,
    anchor: &HeadAnchor,
) -> Result<(), VerifyError> {
    let at = anchor.seq();
    if anchor.key != *key || !anchor.is_signed() {
        return Err(VerifyError::Anchor(AnchorError::BadSignature {
            origin: "the anchor".to_owned(),
            generation: anchor.head.generation,
            seq: at,
            key: Box::new(*key),
        }));
    }
    if report.records < at {
        return Err(failure(
            report.records + 1,
            FailureKind::BehindAnchor,
            format!(
                "the anchor's signed head (generation {}) says records up to seq {at} were \
                 committed, but the ledger ends at seq {} (its signed head is generation {}, \
                 at seq {}): records {}..={at} were cut off and an older signed head put back",
                anchor.head.generation,
                report.records,
                report.signed_head.generation,
                report.head.seq,
                report.records + 1,
            ),
        ));
    }
    let stored = stored_hash_at(conn, db, at)?;
    if stored != Some(anchor.head.floor.hash) {
        return Err(failure(
            at,
            FailureKind::AnchorMismatch,
            format!(
                "the anchor's signed head (generation {}) says record {at} has hash {}, the \
                 ledger's record {at} has hash {} (the ledger ends at seq {}): the ledger was \
                 rewritten from seq {at} or before",
                anchor.head.generation,
                anchor.head.floor.hash,
                stored.map_or_else(|| "missing".to_owned(), |h| h.to_string()),
                report.records,
            ),
        ));
    }
    if report.signed_head.generation < anchor.head.generation {
        return Err(failure(
            report.records + 1,
            FailureKind::BehindAnchor,
            format!(
                "the ledger's signed head is generation {} (at seq {}), older than the anchor's \
                 generation {} (at seq {at}; the ledger ends at seq {}): the head file was put \
                 back to an older one, and what followed may have been cut off",
                report.signed_head.generation,
                report.head.seq,
                anchor.head.generation,
                report.records,
            ),
        ));
    }
    Ok(())
}
