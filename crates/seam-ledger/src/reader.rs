//! Reading a ledger without its key and without the writer lock.

use std::collections::VecDeque;
use std::path::Path;

use rusqlite::Connection;

use crate::anchor::HeadAnchor;
use crate::error::{LedgerError, sql_err};
use crate::head::{HeadFileState, SignedHead, read_head_file};
use crate::keys::LedgerPublicKey;
use crate::paths::LedgerPaths;
use crate::record::Record;
use crate::store::{COLUMNS, decode_row, open_reader, row_or_err, rows_after};
use crate::verify::{VerifyError, VerifyReport, check_against_anchor, verify_ledger};

/// A read-only view of a ledger: for `verify`, `tail`, `--follow` and
/// `export`, from any process, while a writer appends or not. Needs neither
/// the key nor the writer lock; works on a copied ledger directory.
#[derive(Debug)]
pub struct LedgerReader {
    paths: LedgerPaths,
    conn: Connection,
}

impl LedgerReader {
    /// Opens the ledger in seam's home.
    pub fn open(seam_home: &Path) -> Result<LedgerReader, LedgerError> {
        LedgerReader::open_paths(LedgerPaths::new(seam_home))
    }

    /// Opens a ledger directory on its own (holding `ledger.sqlite` and `head`,
    /// and the `-wal` file if the copy was taken while a writer was open).
    pub fn open_dir(ledger_dir: &Path) -> Result<LedgerReader, LedgerError> {
        LedgerReader::open_paths(LedgerPaths::of_ledger_dir(ledger_dir))
    }

    pub fn open_paths(paths: LedgerPaths) -> Result<LedgerReader, LedgerError> {
        let conn = open_reader(&paths.db_file)?;
        Ok(LedgerReader { paths, conn })
    }

    pub fn paths(&self) -> &LedgerPaths {
        &self.paths
    }

    /// Verifies the whole ledger with `key`:
    ///
    /// 1. every record from seq 1 in order: seq contiguous (else
    ///    [`Gap`](crate::FailureKind::Gap)), `prev_hash` equal to the previous
    ///    record's hash ([`BrokenChain`](crate::FailureKind::BrokenChain)),
    ///    params equal to `params_sha256` and fields equal to `hash`
    ///    ([`BadHash`](crate::FailureKind::BadHash)), signature by `key`
    ///    ([`BadSignature`](crate::FailureKind::BadSignature));
    /// 2. the head file: a slot that is whole and signed by `key`, the newest
    ///    such ([`BadHead`](crate::FailureKind::BadHead) if none); its floor not
    ///    beyond the last record ([`Truncated`](crate::FailureKind::Truncated))
    ///    and naming its record's hash
    ///    ([`HeadMismatch`](crate::FailureKind::HeadMismatch)); the last record
    ///    not beyond its ceiling ([`HeadBehind`](crate::FailureKind::HeadBehind):
    ///    the head file was rolled back), and if at the ceiling, with its hash.
    ///
    /// Records between the floor and the ceiling pass: they are what an
    /// unclean stop leaves (the report counts them in
    /// [`VerifyReport::unsealed`]). The first failure found is returned.
    /// Nothing is written; it does not wait for a live writer.
    pub fn verify(&self, key: &LedgerPublicKey) -> Result<VerifyReport, VerifyError> {
        verify_ledger(&self.conn, &self.paths, key)
    }

    /// [`Self::verify`], then holds the ledger to an external anchor, a signed head kept
    /// outside seam's home (see the `anchor` module), which catches what verification alone
    /// cannot: the records cut after some seq and the head file of that time put back. Fails
    /// with [`VerifyError::Anchor`] when the anchor is not signed by `key`, and with
    /// [`BehindAnchor`](crate::FailureKind::BehindAnchor) when the ledger ends before the
    /// anchor's seq or its signed head is of an older generation than the anchor's, and
    /// [`AnchorMismatch`](crate::FailureKind::AnchorMismatch) when the record at the anchor's
    /// seq does not have the anchor's hash. Every message names the anchor's seq and the
    /// ledger's.
    pub fn verify_against(
        &self,
        key: &LedgerPublicKey,
        anchor: &HeadAnchor,
    ) -> Result<VerifyReport, VerifyError> {
        let report = verify_ledger(&self.conn, &self.paths, key)?;
        check_against_anchor(&self.conn, &self.paths.db_file, key, &report, anchor)?;
        Ok(report)
    }

    /// The last `n` records, oldest first. Not verified: use [`Self::verify`].
    pub fn tail(&self, n: usize) -> Result<Vec<Record>, LedgerError> {
        let db = &self.paths.db_file;
        let mut stmt = self
            .conn
            .prepare_cached(&format!(
                "SELECT {COLUMNS} FROM records ORDER BY seq DESC LIMIT ?1"
            ))
            .map_err(sql_err(db))?;
        let mut rows = stmt
            .query([i64::try_from(n).unwrap_or(i64::MAX)])
            .map_err(sql_err(db))?;
        let mut out = Vec::new();
        while let Some(row) = rows.next().map_err(sql_err(db))? {
            out.push(row_or_err(db, decode_row(row))?);
        }
        out.reverse();
        Ok(out)
    }

    /// Up to `limit` records with seq > `seq`, in order: poll this with the
    /// last seq seen to follow the ledger. Not verified.
    pub fn records_after(&self, seq: u64, limit: usize) -> Result<Vec<Record>, LedgerError> {
        let db = &self.paths.db_file;
        rows_after(&self.conn, db, seq, u64::MAX, limit)?
            .into_iter()
            .map(|row| row_or_err(db, row))
            .collect()
    }

    /// The highest seq stored (0 for an empty ledger).
    pub fn last_seq(&self) -> Result<u64, LedgerError> {
        let db = &self.paths.db_file;
        let max: Option<i64> = self
            .conn
            .query_row("SELECT max(seq) FROM records", [], |r| r.get(0))
            .map_err(sql_err(db))?;
        Ok(max.and_then(|m| u64::try_from(m).ok()).unwrap_or(0))
    }

    /// The head file's newest well-formed slot, its signature unchecked
    /// (`None` if there is no head file or no well-formed slot).
    pub fn head(&self) -> Result<Option<SignedHead>, LedgerError> {
        Ok(match read_head_file(&self.paths.head_file)? {
            HeadFileState::Slots(slots) => (*slots)
                .into_iter()
                .filter_map(Result::ok)
                .max_by_key(|head| head.generation),
            HeadFileState::Missing | HeadFileState::Malformed(_) => None,
        })
    }

    /// Every record from seq 1 in order, read in chunks (for `export --json`:
    /// write [`Record::to_json_line`] of each). Not verified.
    pub fn records(&self) -> Records<'_> {
        Records {
            reader: self,
            after: 0,
            buffer: VecDeque::new(),
            done: false,
        }
    }
}

/// Iterator over all records, see [`LedgerReader::records`].
#[derive(Debug)]
pub struct Records<'r> {
    reader: &'r LedgerReader,
    after: u64,
    buffer: VecDeque<Record>,
    done: bool,
}

const EXPORT_CHUNK: usize = 1024;

impl Iterator for Records<'_> {
    type Item = Result<Record, LedgerError>;

    fn next(&mut self) -> Option<Self::Item> {
        if self.buffer.is_empty() && !self.done {
            match self.reader.records_after(self.after, EXPORT_CHUNK) {
                Ok(chunk) => {
                    self.done = chunk.len() < EXPORT_CHUNK;
                    self.buffer.extend(chunk);
                }
                Err(e) => {
                    self.done = true;
                    return Some(Err(e));
                }
            }
        }
        let record = self.buffer.pop_front()?;
        self.after = record.seq;
        Some(Ok(record))
    }
}
