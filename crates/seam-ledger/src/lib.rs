//! The signed, hash-chained audit ledger (DESIGN.md, `Toolbox::call` step 7).
//!
//! Every call that reaches `Toolbox::call`, admitted or refused, is appended
//! here before its answer leaves the gate. This crate owns the ledger's files
//! in seam's home, the format of a record, its hash and signature, durable
//! group-committed appends, the signed head, and verification. It does not
//! depend on the gate; the gate calls [`Ledger::append`] and seam-cli wires
//! `seam ledger pubkey|verify|tail|export` onto [`public_key`], [`verify`] and
//! [`LedgerReader`].
//!
//! It must never: print (the CLI prints, through seam-term); write the signing
//! key anywhere but its 0600 file, or show it in `Debug`; return from
//! [`Ledger::append`] before the record is durable; append to a ledger whose
//! head does not check out; or write anything while verifying.
//!
//! # Files
//!
//! See [`LedgerPaths`]: `keys/ledger.key` (32-byte Ed25519 seed, 0600, made on
//! first open), `ledger/ledger.sqlite` (SQLite, WAL, `synchronous=FULL`,
//! 0600), `ledger/head` (the signed head, JSON), `ledger/lock` (the writer's
//! `flock`). The default policy protects `keys/` and `ledger/`.
//!
//! # Record hash
//!
//! `hash = SHA-256(enc)` where, with `be64` an unsigned big-endian 64-bit
//! integer and `str(x) = be64(byte length of x) ‖ UTF-8 bytes of x`:
//!
//! ```text
//! enc = str("seam-ledger/record/v1")
//!     ‖ be64(seq)
//!     ‖ be64(time as signed unix nanoseconds, two's complement)
//!     ‖ str(invocation_id)
//!     ‖ (0x00 if turn_id is None | 0x01 ‖ str(turn_id))
//!     ‖ str(tool) ‖ str(tool_version)
//!     ‖ params_sha256                      (32 bytes: SHA-256 of the canonical params JSON)
//!     ‖ (0x00 if admitted | 0x01 ‖ str(refusal code))
//!     ‖ (0x00 if output_sha256 is None | 0x01 ‖ output_sha256 (32 bytes))
//!     ‖ (0x00 | 0x01 for tainted)
//!     ‖ be64(number of scrubbed shapes) ‖ str(shape) for each, in order
//!     ‖ prev_hash                          (32 bytes; zeros for seq 1)
//! ```
//!
//! Every variable-length field is length-prefixed and every optional one
//! tagged, so two different records never share an encoding. The params are
//! stored as canonical JSON ([`canonical_json`]: keys sorted, no whitespace)
//! and `params_sha256` is the SHA-256 of exactly the stored text. The record's
//! `signature` is Ed25519 (RFC 8032, verified strictly) over the 32 bytes of
//! `hash`. The signed head's signature is over
//! `str("seam-ledger/head/v1") ‖ be64(seq) ‖ hash`; the two messages have
//! different lengths, so neither signature can stand for the other.
//!
//! # Durability and group commit
//!
//! [`Ledger::append`] canonicalises the params on the caller's thread, hands
//! the entry to the writer and blocks. The writer is two threads:
//!
//! - the *sequencer* takes every request waiting (up to 512), gives each the
//!   next seq and the time, hashes it onto the chain and signs it, and passes
//!   the batch on. It runs ahead of the disk: the next batch is signed while
//!   the last one's fsync is in flight.
//! - the *committer* takes every signed batch waiting, inserts them in one
//!   `BEGIN IMMEDIATE` transaction and commits it (WAL, `synchronous=FULL`:
//!   the commit fsyncs the WAL), then answers each caller.
//!
//! So concurrent callers share one fsync, and a caller's record is on disk
//! when `append` returns. If a commit fails, its callers get
//! [`LedgerError::AppendFailed`], so do callers whose records the sequencer had
//! already chained onto the failed ones, and the chain resumes from the last
//! committed record (no gap, no fork). [`Ledger::stats`] counts records and
//! commits.
//!
//! # Signed head
//!
//! After each commit the writer hands the new (seq, hash) to a head thread,
//! which signs the newest and replaces `ledger/head` atomically (temporary
//! file, fsync, rename, fsync of the directory), coalescing commits that
//! happened meanwhile. The head is off the append path because that
//! replacement costs several fsyncs (milliseconds here); it lags the last
//! commit by about one head write. Verification requires the head to name
//! exactly the last record: a tail cut off ([`FailureKind::Truncated`]) or a
//! head rolled back ([`FailureKind::HeadBehind`]) is reported. A verify while
//! a writer holds the lock gives the head a few seconds to catch up.
//!
//! After an unclean stop the head may be behind the last commit. The next
//! [`Ledger::open`] (the gate's restart) checks the records after the head and
//! re-signs it, reporting [`HeadRecovery`] ([`repair_head`] does only that);
//! until then `verify` reports `HeadBehind`. Records committed after the last head write are therefore not
//! protected against truncation by the head until it is written.
//!
//! # Reading
//!
//! [`LedgerReader`] opens the database read-only and needs neither the key nor
//! the lock: [`LedgerReader::verify`] with a public key (a copied ledger plus
//! `--pubkey`), [`LedgerReader::tail`], [`LedgerReader::records_after`] (poll
//! it to follow), [`LedgerReader::records`] and [`Record::to_json_line`] (export).

mod digest;
mod error;
mod fsutil;
mod head;
mod keys;
mod ledger;
mod paths;
mod reader;
mod record;
mod store;
mod time;
mod verify;

use std::path::Path;

pub use digest::{Ed25519Signature, HexParseError, Sha256Digest, canonical_json};
pub use error::LedgerError;
pub use head::{HEAD_FORMAT, SignedHead, parse_head_file};
pub use keys::{LedgerPublicKey, LedgerSigningKey};
pub use ledger::{DEFAULT_LOCK_WAIT, HeadRecovery, Ledger, LedgerStats};
pub use paths::LedgerPaths;
pub use reader::{LedgerReader, Records};
pub use record::{Decision, Entry, Record};
pub use time::{Timestamp, TimestampParseError};
pub use verify::{FailureKind, VerifyError, VerifyFailure, VerifyReport};

/// The public key of the ledger in seam's home, read from its key file (for
/// `seam ledger pubkey`; works while the gate holds the ledger open).
pub fn public_key(seam_home: &Path) -> Result<LedgerPublicKey, LedgerError> {
    let path = LedgerPaths::new(seam_home).key_file;
    keys::read_signing_key(&path)?
        .map(|key| key.public_key())
        .ok_or(LedgerError::KeyMissing {
            path,
            ledger_has_records: false,
        })
}

/// Re-signs a head left behind by an unclean stop, as the gate's next start
/// would: opens the existing ledger (checking the records after the head) and
/// closes it. `Ok(None)` if the head was current. Fails with
/// [`LedgerError::NoLedger`] rather than create a ledger, with
/// [`LedgerError::Busy`] while a writer is running (its head is its own
/// business), and with [`LedgerError::Tampered`] if what follows the head
/// does not check out.
pub fn repair_head(seam_home: &Path) -> Result<Option<HeadRecovery>, LedgerError> {
    let paths = LedgerPaths::new(seam_home);
    if !paths.db_file.exists() {
        return Err(LedgerError::NoLedger {
            path: paths.db_file,
        });
    }
    let ledger = Ledger::open_with_lock_wait(seam_home, std::time::Duration::ZERO)?;
    let recovery = ledger.head_recovery();
    ledger.close()?;
    Ok(recovery)
}

/// Verifies the ledger in seam's home (`seam ledger verify`): with `pubkey` if
/// given, else with the public half of the home's own key. Read-only; see
/// [`LedgerReader::verify`] for what is checked.
pub fn verify(
    seam_home: &Path,
    pubkey: Option<&LedgerPublicKey>,
) -> Result<VerifyReport, VerifyError> {
    let key = match pubkey {
        Some(key) => *key,
        None => public_key(seam_home)?,
    };
    LedgerReader::open(seam_home)?.verify(&key)
}
