//! The one error type of the crate.

use std::path::PathBuf;

use crate::verify::VerifyFailure;

/// Why the ledger could not be opened, written or read.
///
/// A ledger that was read fine but does not verify is not an error of this
/// type: that is a [`VerifyFailure`] (see [`crate::VerifyError`]). The one
/// exception is [`LedgerError::Tampered`]: [`crate::Ledger::open`] refuses to
/// append to a ledger whose tail does not check out.
///
/// An I/O or SQLite cause is part of the message and not a `source()`: the gate's ledger
/// stream answers with the message alone.
#[derive(Debug, thiserror::Error)]
pub enum LedgerError {
    /// A file system operation failed.
    #[error("cannot {action} {path}: {cause}")]
    Io {
        action: &'static str,
        path: PathBuf,
        cause: std::io::Error,
    },
    /// SQLite refused an operation on the ledger database.
    #[error("ledger database {path}: {cause}")]
    Sqlite {
        path: PathBuf,
        cause: rusqlite::Error,
    },
    /// The database is not a seam ledger of a format this crate knows.
    #[error("ledger database {path} has an unexpected schema: {reason}")]
    UnexpectedSchema { path: PathBuf, reason: String },
    /// There is no ledger database at this place.
    #[error("no ledger database at {path}")]
    NoLedger { path: PathBuf },
    /// The signing key file is readable or writable by someone other than its owner.
    #[error("signing key {path} has mode {mode:o}; it must be owner-only (0600)")]
    InsecureKeyFile { path: PathBuf, mode: u32 },
    /// The signing key file belongs to another user.
    #[error("signing key {path} belongs to uid {owner}, not to this user (uid {uid})")]
    ForeignKeyFile { path: PathBuf, owner: u32, uid: u32 },
    /// The signing key file is not 32 bytes of Ed25519 seed.
    #[error("signing key {path} is malformed: {reason}")]
    MalformedKey { path: PathBuf, reason: String },
    /// No signing key, and it cannot be made: the ledger already holds records
    /// signed by a key that is gone, or the caller only wanted to read it.
    #[error("no signing key at {path}{}", if *.ledger_has_records {
        " but the ledger already holds records: refusing to make a new key for an existing ledger"
    } else { "" })]
    KeyMissing {
        path: PathBuf,
        ledger_has_records: bool,
    },
    /// A public key given as text is not 64 hex digits of an Ed25519 point.
    #[error("public key {text:?} is not an Ed25519 public key (64 hex digits): {reason}")]
    BadPublicKey { text: String, reason: String },
    /// Another `Ledger` (in this or another process) holds the writer lock.
    #[error("ledger {path} is open for writing elsewhere (its lock is held)")]
    Busy { path: PathBuf },
    /// [`crate::Ledger::open`] found that the records after the signed head, or
    /// the head itself, do not check out; it will not append to such a ledger.
    #[error("ledger {path} does not verify, refusing to append to it: {failure}")]
    Tampered {
        path: PathBuf,
        failure: Box<VerifyFailure>,
    },
    /// A stored row could not be decoded (reading, not verifying).
    #[error("ledger row {seq} in {path} is malformed: {reason}")]
    MalformedRow {
        path: PathBuf,
        seq: i64,
        reason: String,
    },
    /// The transaction for a batch of appends failed; none of the batch was recorded.
    #[error("appending to {path} failed, nothing of this batch was recorded: {message}")]
    AppendFailed { path: PathBuf, message: String },
    /// The signed head could not be written after a commit; appends are refused
    /// until it can be.
    #[error("writing the signed head {path} failed: {message}")]
    HeadWriteFailed { path: PathBuf, message: String },
    /// The writer threads are gone (the ledger is closing, or one panicked).
    #[error("the ledger writer for {path} has stopped")]
    WriterStopped { path: PathBuf },
}

/// A file primitive's failure (seam_home::file) is the ledger's file failure.
impl From<seam_home::FileError> for LedgerError {
    fn from(e: seam_home::FileError) -> LedgerError {
        LedgerError::Io {
            action: e.action,
            path: e.path,
            cause: e.source,
        }
    }
}

pub(crate) fn io_err(
    action: &'static str,
    path: impl Into<PathBuf>,
) -> impl FnOnce(std::io::Error) -> LedgerError {
    let path = path.into();
    move |cause| LedgerError::Io {
        action,
        path,
        cause,
    }
}

pub(crate) fn sql_err(path: impl Into<PathBuf>) -> impl FnOnce(rusqlite::Error) -> LedgerError {
    let path = path.into();
    move |cause| LedgerError::Sqlite { path, cause }
}
