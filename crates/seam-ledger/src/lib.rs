//! The signed, hash-chained audit ledger (DESIGN.md, `Toolbox::call` step 7).
//!
//! Every call that reaches `Toolbox::call`, admitted or refused, is appended
//! here before its answer leaves the gate. This crate owns the ledger's files
//! in seam's home, the format of a record, its hash and signature, durable
//! group-committed appends, the signed head, and verification. It does not
//! depend on the gate; the gate calls [`Ledger::append`] and seam-cli wires
//! `seam ledger pubkey|verify|tail|export` onto [`public_key`], [`verify`] and
//! [`LedgerReader`]. It also owns how seam writes a time: [`Timestamp`] and
//! [`rfc3339_seconds`], RFC 3339 UTC, the one formatter the memory stores, the
//! return queue and `facts.get` use too (the lowest crate that needs one); and
//! seam's one canonical JSON ([`canonical_json`]), in which the params are
//! stored and hashed, the gate's output digest is taken and the MCP upstream
//! definitions are fingerprinted.
//!
//! It must never: print (the CLI prints, through seam-term); write the signing
//! key anywhere but its 0600 file, or show it in `Debug`; return from
//! [`Ledger::append`] before the record is durable; commit a batch before a
//! durable head's ceiling covers it; append to a ledger whose head does not
//! check out; or write anything while verifying.
//!
//! # Files
//!
//! See [`LedgerPaths`]: `keys/ledger.key` (32-byte Ed25519 seed, 0600, made on
//! first open), `ledger/ledger.sqlite` (SQLite, WAL, `synchronous=FULL`,
//! 0600), `ledger/head` (the signed head: two slots, 8 KiB, 0600),
//! `ledger/lock` (the writer's `flock`). The default policy protects `keys/`
//! and `ledger/`.
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
//!     ‖ (0x00 if admitted | 0x01 ‖ str(refusal code)
//!        | 0x02 ‖ str(consent answer) ‖ str(consent scope) ‖ by ‖ str(policy digest))
//!                                          (by: 0x00 terminal | 0x01 ‖ be64(peer uid) | 0x02 nobody)
//!     ‖ (0x00 if output_sha256 is None | 0x01 ‖ output_sha256 (32 bytes))
//!     ‖ (0x00 | 0x01 for tainted)
//!     ‖ be64(number of scrubbed shapes) ‖ str(shape) for each, in order
//!     ‖ prev_hash                          (32 bytes; zeros for seq 1)
//! ```
//!
//! Every variable-length field is length-prefixed and every optional one
//! tagged, so two different records never share an encoding. The params are
//! stored as canonical JSON ([`canonical_json`]: keys sorted, no whitespace)
//! and `params_sha256` is the SHA-256 of exactly the stored text.
//! `output_sha256` is the SHA-256 of the canonical JSON of the output the
//! caller was answered with (the gate's envelope `output`, after scrubbing). The
//! ledger does not keep outputs; an auditor holding one recomputes its digest as
//! `Sha256Digest::of(canonical_json(&output).as_bytes())`, or with any writer of
//! the same text: no whitespace, object keys sorted by their UTF-8 bytes,
//! strings escaped and numbers written as `serde_json` writes them. The record's
//! `signature` is Ed25519 (RFC 8032, verified strictly) over the 32 bytes of
//! `hash`. A head slot's signature is over
//! `str("seam-ledger/head/v2") ‖ be64(generation) ‖ be64(floor.seq) ‖
//! floor.hash ‖ be64(ceiling.seq) ‖ ceiling.hash` (115 bytes); the two
//! messages have different lengths, so neither signature can stand for the
//! other.
//!
//! # Durability and group commit
//!
//! [`Ledger::append`] canonicalises the params on the caller's thread, hands
//! the entry to the writer and blocks. The writer is a pipeline of three
//! threads:
//!
//! - the *sequencer* takes every request waiting (up to 512), gives each the
//!   next seq and the time, hashes it onto the chain and signs it, asks the
//!   head thread for a ceiling at the batch's last record, and passes the
//!   batch on. It runs ahead of the disk: the next batch is signed while the
//!   last one's syncs are in flight.
//! - the *head thread* is the one writer of the head file: it writes the
//!   newest ceiling asked for (one write covers every batch announced
//!   meanwhile) and `fdatasync`s it; when appends are quiet it seals.
//! - the *committer* takes every batch waiting, inserts them in one
//!   `BEGIN IMMEDIATE` transaction while their ceiling is being written,
//!   waits until a durable ceiling covers them, commits (WAL,
//!   `synchronous=FULL`: the commit fsyncs the WAL), then answers each caller.
//!
//! So concurrent callers share one head write and one commit, the ceiling
//! write of one round overlaps the commit of the last, and a caller's record
//! is on disk, under a durable ceiling, when `append` returns. If a commit
//! fails, its callers get [`LedgerError::AppendFailed`], so do callers whose
//! records the sequencer had already chained onto the failed ones, and the
//! chain resumes from the last committed record (no gap, no fork); if the
//! ceiling cannot be written, the batch is rolled back and its callers get
//! [`LedgerError::HeadWriteFailed`]. [`Ledger::stats`] counts records and
//! commits.
//!
//! # Signed head
//!
//! `ledger/head` is two fixed 4 KiB slots, A and B. Each holds a signed
//! [`SignedHead`] {generation, floor, ceiling} (format marker
//! [`HEAD_FORMAT`], the fields, the signature and a SHA-256 checksum so a torn
//! write is told from a forgery; see [`SignedHead::to_slot_bytes`]). The
//! floor is the last record known committed; the ceiling is the last record
//! the writer may have handed to SQLite. The file is made once (written whole,
//! fsynced, renamed into place, directory fsynced); after that a head write
//! is a `pwrite` of one slot and an `fdatasync`, no rename and no directory
//! sync. Writes alternate: a write goes to the slot that does not hold the
//! newest durable head, and only after it is durable does the next go to the
//! other. A torn write (a crash or power loss mid-write) can only damage the
//! slot being written; the reader takes the whole, signed slot with the
//! highest generation.
//!
//! The order per batch ending at record b: the head thread writes
//! {floor: last commit, ceiling: (b, hash_b)} and `fdatasync`s it, *then* the
//! committer commits, *then* the callers are answered; once appends have
//! been quiet for 20 ms the head thread writes {floor: b, ceiling: b} (while
//! appends flow, each ceiling write carries the floor forward instead, so a
//! seal does not stand in the way of the next append). With several batches
//! in the pipeline the ceiling is the last one handed on, the floor the last
//! one known committed. While the writer runs the ceiling never goes down
//! (a ceiling a failed batch left above the last commit stays until the
//! close, which lowers it). So at every
//! instant, on disk, floor ≤ last record ≤ ceiling, whatever moment a
//! `SIGKILL` or a power loss picks. [`verify`] therefore checks:
//!
//! - last < floor: [`FailureKind::Truncated`] (and the record at the floor
//!   must have the floor's hash, else [`FailureKind::HeadMismatch`]);
//! - last > ceiling: [`FailureKind::HeadBehind`]: no crash leaves records
//!   beyond the ceiling, so the head file was rolled back;
//! - floor ≤ last ≤ ceiling passes (at the ceiling, with its hash). Records
//!   after the floor are reported ([`VerifyReport::unsealed`]): without a
//!   live writer, they were written during an unclean stop.
//!
//! The next [`Ledger::open`] after an unclean stop checks the records after
//! the floor and seals the head at the last one, reporting [`HeadRecovery`]
//! ([`repair_head`] does only that).
//!
//! The price and the limits. Every batch costs two `fdatasync`s in series
//! (the ceiling, then the commit), so a lone caller waits for both; under
//! concurrency the ceiling write of one round overlaps the commit of the
//! previous one, so throughput stays near one fsync per round. (The head
//! used to be replaced by rename after each commit, off the append path; that
//! cost three or four syncs per commit in the background, which the commits
//! then queued behind.) Between a
//! commit and its seal (about 20 ms; longer while appends flow, until
//! the next batch's ceiling write), the records after the floor are not
//! protected against truncation: after an unclean stop, cutting them off is
//! indistinguishable from a crash before their commit. And a head rolled
//! back *together with* the records after its ceiling cannot be told from an
//! honest ledger: a head file only proves what it last said, not that it is
//! the newest. An external anchor closes that: [`anchor`] (`seam ledger head`)
//! gives the signed head as a line the operator keeps elsewhere
//! ([`append_anchor`]), and [`verify_against`] fails when the ledger is behind
//! the newest such line or disagrees with it at its seq (see the `anchor`
//! module). What happened after the last anchor is still only as safe as the
//! head file.
//!
//! # Reading
//!
//! [`LedgerReader`] opens the database read-only and needs neither the key nor
//! the lock: [`LedgerReader::verify`] with a public key (a copied ledger plus
//! `--pubkey`), [`LedgerReader::tail`], [`LedgerReader::records_after`] (poll
//! it to follow), [`LedgerReader::records`] and [`Record::to_json_line`] (export).

mod anchor;
mod digest;
mod error;
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

pub use anchor::{
    ANCHOR_FORMAT, AnchorError, FileAnchor, HeadAnchor, MAX_ANCHOR_FILE_BYTES, append_anchor,
    read_anchor_file,
};
pub use digest::{Ed25519Signature, HexParseError, Sha256Digest, canonical_json};
pub use error::LedgerError;
pub use head::{
    ChainLink, HEAD_FILE_LEN, HEAD_FORMAT, HEAD_SLOT_LEN, HeadDefect, SignedHead, parse_head_file,
};
pub use keys::{LedgerPublicKey, LedgerSigningKey};
pub use ledger::{DEFAULT_LOCK_WAIT, HeadRecovery, Ledger, LedgerStats};
pub use paths::LedgerPaths;
pub use reader::{LedgerReader, Records};
pub use record::{Consent, ConsentAnswer, ConsentBy, ConsentScope, Decision, Entry, Record};
pub use time::{Timestamp, TimestampParseError, rfc3339_seconds};
pub use verify::{FailureKind, VerifyError, VerifyFailure, VerifyReport};

/// The first `max` characters of `text` (the whole of it when shorter), for quoting a
/// malformed value in an error message: counted in characters and never split inside one.
///
/// Not `seam_term::head`, which is the one clipper everywhere else: the ledger depends on no
/// seam crate but seam-home (ARCHITECTURE.md's dependency rules), so it keeps this copy, the
/// only one in the crate.
pub(crate) fn clipped(text: &str, max: usize) -> String {
    match text.char_indices().nth(max) {
        Some((end, _)) => text[..end].to_owned(),
        None => text.to_owned(),
    }
}

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

/// Seals a head left unsealed by an unclean stop, as the gate's next start
/// would: opens the existing ledger (checking the records after the head's
/// floor) and closes it. `Ok(None)` if nothing was unsealed. Fails with
/// [`LedgerError::NoLedger`] rather than create a ledger, with
/// [`LedgerError::Busy`] while a writer is running (its head is its own
/// business), and with [`LedgerError::Tampered`] if the head does not check
/// out (a head rolled back is not re-signed) or what follows its floor does
/// not.
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

/// The signed head of the ledger in seam's home as an external anchor (`seam ledger head`):
/// the ledger is verified first (a ledger that does not verify is not anchored), then its
/// head in force and its public key are returned. Keep [`HeadAnchor::to_json_line`] somewhere
/// the ledger's host cannot rewrite ([`append_anchor`]).
pub fn anchor(
    seam_home: &Path,
    pubkey: Option<&LedgerPublicKey>,
) -> Result<HeadAnchor, VerifyError> {
    let key = match pubkey {
        Some(key) => *key,
        None => public_key(seam_home)?,
    };
    let report = LedgerReader::open(seam_home)?.verify(&key)?;
    Ok(HeadAnchor {
        key,
        head: report.signed_head,
    })
}

/// [`verify`], then holds the ledger to the newest of its heads in the anchor file at
/// `anchor_file` (`seam ledger verify --against FILE`; see [`read_anchor_file`] and
/// [`LedgerReader::verify_against`]). Returns the report and the anchor used.
pub fn verify_against(
    seam_home: &Path,
    pubkey: Option<&LedgerPublicKey>,
    anchor_file: &Path,
) -> Result<(VerifyReport, FileAnchor), VerifyError> {
    let key = match pubkey {
        Some(key) => *key,
        None => public_key(seam_home)?,
    };
    let anchor = read_anchor_file(anchor_file, &key)?;
    let report = LedgerReader::open(seam_home)?.verify_against(&key, &anchor.anchor)?;
    Ok((report, anchor))
}

#[cfg(test)]
mod tests {
    /// Counted in characters, never split inside one: a cut by bytes would panic on `ñ` (two
    /// bytes) or keep half of it.
    #[test]
    fn clipped_keeps_whole_characters() {
        assert_eq!(super::clipped("añob", 2), "añ");
        assert_eq!(super::clipped("año", 3), "año");
        assert_eq!(super::clipped("日本語", 1), "日");
        assert_eq!(super::clipped("", 4), "");
    }
}
