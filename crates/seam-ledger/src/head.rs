//! The signed head: a file of two fixed-size slots, each a signed statement
//! {generation, floor, ceiling}, rewritten in place in turn.
//!
//! A slot says: every record up to `floor` was committed, and no record
//! beyond `ceiling` was handed to the database. The writer makes a slot with
//! a ceiling that covers a batch durable *before* it commits the batch, and
//! seals (floor = ceiling = the last record) once a commit is durable. A
//! write goes to the slot that does not hold the newest durable state, so a
//! torn write can only damage the slot being written; the reader takes the
//! valid slot with the highest generation.

use std::fs::{File, OpenOptions};
use std::io::Read;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use serde::Serialize;
use sha2::{Digest, Sha256};

use crate::digest::{Ed25519Signature, Sha256Digest};
use crate::error::{LedgerError, io_err};
use crate::keys::{LedgerPublicKey, LedgerSigningKey};

/// The format marker at the start of every head slot.
pub const HEAD_FORMAT: &str = "seam-ledger-head/v2";
/// The distance between the slots: slot A at offset 0, slot B at this offset.
pub const HEAD_SLOT_LEN: usize = 4096;
/// The head file's exact length: two slots.
pub const HEAD_FILE_LEN: usize = 2 * HEAD_SLOT_LEN;

/// Domain tag that starts every signed head's message.
const HEAD_DOMAIN: &[u8] = b"seam-ledger/head/v2";
/// The earlier, single-head JSON format (not read by this version).
const EARLIER_FORMAT: &[u8] = b"seam-ledger-head/v1";

/// Byte layout of a slot (big-endian integers); the rest of the slot is zeros.
const FORMAT_LEN: usize = 24;
const GENERATION_AT: usize = FORMAT_LEN;
const FLOOR_AT: usize = GENERATION_AT + 8;
const CEILING_AT: usize = FLOOR_AT + 40;
const SIGNATURE_AT: usize = CEILING_AT + 40;
const CHECKSUM_AT: usize = SIGNATURE_AT + 64;
/// The bytes of a slot that carry anything: what a slot write writes.
const SLOT_BODY_LEN: usize = CHECKSUM_AT + 32;

/// A place in the chain: a record's seq and hash; (0, zeros) before the
/// first record.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize)]
pub struct ChainLink {
    pub seq: u64,
    pub hash: Sha256Digest,
}

impl ChainLink {
    /// Where every chain starts: (0, zeros).
    pub const ORIGIN: ChainLink = ChainLink {
        seq: 0,
        hash: Sha256Digest::ZERO,
    };

    pub fn new(seq: u64, hash: Sha256Digest) -> ChainLink {
        ChainLink { seq, hash }
    }
}

/// One slot of the head file, as the key holder signed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
pub struct SignedHead {
    /// Counts head writes: the valid slot with the higher one is current.
    pub generation: u64,
    /// The last record known committed when this was written (sealed).
    pub floor: ChainLink,
    /// The last record the writer may have handed to the database: nothing
    /// beyond it was ever committed while this slot was the newest.
    pub ceiling: ChainLink,
    /// Ed25519 over [`SignedHead::message`].
    pub signature: Ed25519Signature,
}

/// Why a head file, or one of its slots, cannot be used (before any
/// signature is checked).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HeadDefect {
    #[error("it is {len} bytes long, not {HEAD_FILE_LEN}")]
    FileLength { len: u64 },
    #[error(
        "it is a head of the earlier format seam-ledger-head/v1 (one JSON head), \
         which this version does not read"
    )]
    EarlierFormat,
    #[error("empty (never written)")]
    Empty,
    #[error("it does not start with the format marker {HEAD_FORMAT}")]
    UnknownFormat,
    #[error("its checksum does not match its content (a torn or damaged write)")]
    Checksum,
    #[error("{0}")]
    Inconsistent(&'static str),
}

impl SignedHead {
    pub(crate) fn sign(
        key: &LedgerSigningKey,
        generation: u64,
        floor: ChainLink,
        ceiling: ChainLink,
    ) -> SignedHead {
        let mut head = SignedHead {
            generation,
            floor,
            ceiling,
            signature: Ed25519Signature([0; 64]),
        };
        head.signature = key.sign(&head.message());
        head
    }

    /// The signed message: `be64(19) ‖ "seam-ledger/head/v2" ‖ be64(generation)
    /// ‖ be64(floor.seq) ‖ floor.hash ‖ be64(ceiling.seq) ‖ ceiling.hash`
    /// (115 bytes; a record signature is over 32).
    pub fn message(&self) -> Vec<u8> {
        let mut m = Vec::with_capacity(8 + HEAD_DOMAIN.len() + 8 + 2 * 40);
        m.extend_from_slice(&(HEAD_DOMAIN.len() as u64).to_be_bytes());
        m.extend_from_slice(HEAD_DOMAIN);
        m.extend_from_slice(&self.generation.to_be_bytes());
        for link in [self.floor, self.ceiling] {
            m.extend_from_slice(&link.seq.to_be_bytes());
            m.extend_from_slice(link.hash.as_bytes());
        }
        m
    }

    /// Whether `key` signed this head.
    pub fn is_signed_by(&self, key: &LedgerPublicKey) -> bool {
        key.verifies(&self.message(), &self.signature)
    }

    /// The slot as stored ([`HEAD_SLOT_LEN`] bytes): the format marker
    /// (zero-padded to 24 bytes), `be64(generation)`, `be64(floor.seq)`,
    /// `floor.hash`, `be64(ceiling.seq)`, `ceiling.hash`, the signature, the
    /// SHA-256 of all that (so a torn write is told from a forgery), zeros.
    pub fn to_slot_bytes(&self) -> Vec<u8> {
        let mut slot = vec![0u8; HEAD_SLOT_LEN];
        slot[..HEAD_FORMAT.len()].copy_from_slice(HEAD_FORMAT.as_bytes());
        slot[GENERATION_AT..FLOOR_AT].copy_from_slice(&self.generation.to_be_bytes());
        for (at, link) in [(FLOOR_AT, self.floor), (CEILING_AT, self.ceiling)] {
            slot[at..at + 8].copy_from_slice(&link.seq.to_be_bytes());
            slot[at + 8..at + 40].copy_from_slice(link.hash.as_bytes());
        }
        slot[SIGNATURE_AT..CHECKSUM_AT].copy_from_slice(self.signature.as_bytes());
        let checksum = Sha256::digest(&slot[..CHECKSUM_AT]);
        slot[CHECKSUM_AT..SLOT_BODY_LEN].copy_from_slice(&checksum);
        slot
    }

    /// Parses one slot ([`HEAD_SLOT_LEN`] bytes). Checks its form, checksum
    /// and consistency, not its signature.
    pub fn from_slot_bytes(slot: &[u8]) -> Result<SignedHead, HeadDefect> {
        if slot.len() != HEAD_SLOT_LEN {
            return Err(HeadDefect::Inconsistent("a slot of the wrong length"));
        }
        if slot.iter().all(|b| *b == 0) {
            return Err(HeadDefect::Empty);
        }
        let mut marker = [0u8; FORMAT_LEN];
        marker[..HEAD_FORMAT.len()].copy_from_slice(HEAD_FORMAT.as_bytes());
        if slot[..FORMAT_LEN] != marker {
            return Err(HeadDefect::UnknownFormat);
        }
        if Sha256::digest(&slot[..CHECKSUM_AT])[..] != slot[CHECKSUM_AT..SLOT_BODY_LEN] {
            return Err(HeadDefect::Checksum);
        }
        if slot[SLOT_BODY_LEN..].iter().any(|b| *b != 0) {
            return Err(HeadDefect::Inconsistent(
                "bytes after its checksum are not zero",
            ));
        }
        let be64 = |at: usize| {
            let mut b = [0u8; 8];
            b.copy_from_slice(&slot[at..at + 8]);
            u64::from_be_bytes(b)
        };
        let link = |at: usize| {
            let mut hash = [0u8; 32];
            hash.copy_from_slice(&slot[at + 8..at + 40]);
            ChainLink::new(be64(at), Sha256Digest(hash))
        };
        let mut signature = [0u8; 64];
        signature.copy_from_slice(&slot[SIGNATURE_AT..CHECKSUM_AT]);
        let head = SignedHead {
            generation: be64(GENERATION_AT),
            floor: link(FLOOR_AT),
            ceiling: link(CEILING_AT),
            signature: Ed25519Signature(signature),
        };
        head.check_consistent()?;
        Ok(head)
    }

    fn check_consistent(&self) -> Result<(), HeadDefect> {
        let (floor, ceiling) = (self.floor, self.ceiling);
        if self.generation == 0 {
            Err(HeadDefect::Inconsistent("generation 0"))
        } else if floor.seq > ceiling.seq {
            Err(HeadDefect::Inconsistent("its floor is beyond its ceiling"))
        } else if floor.seq == ceiling.seq && floor.hash != ceiling.hash {
            Err(HeadDefect::Inconsistent(
                "its floor and ceiling name one seq with two hashes",
            ))
        } else if floor.seq == 0 && floor.hash != Sha256Digest::ZERO {
            Err(HeadDefect::Inconsistent(
                "seq 0 with a hash other than zeros",
            ))
        } else {
            Ok(())
        }
    }
}

/// Parses a whole head file into its two slots (A, B), or says why the file
/// as a whole is not a head file. Checks no signature.
pub fn parse_head_file(bytes: &[u8]) -> Result<[Result<SignedHead, HeadDefect>; 2], HeadDefect> {
    if bytes.len() != HEAD_FILE_LEN {
        let trimmed = bytes.trim_ascii_start();
        if trimmed.starts_with(b"{")
            && bytes
                .windows(EARLIER_FORMAT.len())
                .any(|w| w == EARLIER_FORMAT)
        {
            return Err(HeadDefect::EarlierFormat);
        }
        return Err(HeadDefect::FileLength {
            len: bytes.len() as u64,
        });
    }
    let (a, b) = bytes.split_at(HEAD_SLOT_LEN);
    Ok([
        SignedHead::from_slot_bytes(a),
        SignedHead::from_slot_bytes(b),
    ])
}

/// What is at the head file's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HeadFileState {
    Missing,
    Malformed(HeadDefect),
    Slots(Box<[Result<SignedHead, HeadDefect>; 2]>),
}

pub(crate) fn read_head_file(path: &Path) -> Result<HeadFileState, LedgerError> {
    let file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HeadFileState::Missing),
        Err(e) => return Err(io_err("open head file", path)(e)),
    };
    let mut bytes = Vec::with_capacity(HEAD_FILE_LEN);
    file.take(HEAD_FILE_LEN as u64 + 1)
        .read_to_end(&mut bytes)
        .map_err(io_err("read head file", path))?;
    Ok(match parse_head_file(&bytes) {
        Ok(slots) => HeadFileState::Slots(Box::new(slots)),
        Err(defect) => HeadFileState::Malformed(defect),
    })
}

/// The slot names, for messages.
pub(crate) const SLOT_NAMES: [&str; 2] = ["A", "B"];

/// The head in force and the slot it is in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) struct CurrentHead {
    pub head: SignedHead,
    pub slot: usize,
}

/// Why no slot of a head file can be used.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct NoUsableSlot {
    /// The highest ceiling a well-formed slot claims, if any.
    pub claimed_seq: Option<u64>,
    pub reason: String,
}

/// Takes the well-formed slot signed by `key` with the highest generation.
pub(crate) fn select_head(
    slots: &[Result<SignedHead, HeadDefect>; 2],
    key: &LedgerPublicKey,
) -> Result<CurrentHead, NoUsableSlot> {
    let mut best: Option<CurrentHead> = None;
    let mut reasons = Vec::new();
    let mut claimed_seq = None;
    for (slot, parsed) in slots.iter().enumerate() {
        let name = SLOT_NAMES[slot];
        match parsed {
            Err(defect) => reasons.push(format!("slot {name}: {defect}")),
            Ok(head) if !head.is_signed_by(key) => {
                claimed_seq = claimed_seq.max(Some(head.ceiling.seq));
                reasons.push(format!(
                    "slot {name} (generation {}, ceiling seq {}): not signed by key {key}",
                    head.generation, head.ceiling.seq
                ));
            }
            Ok(head) => match best {
                Some(other) if other.head.generation == head.generation && other.head != *head => {
                    return Err(NoUsableSlot {
                        claimed_seq: Some(head.ceiling.seq.max(other.head.ceiling.seq)),
                        reason: format!(
                            "slots A and B both claim generation {} with different contents",
                            head.generation
                        ),
                    });
                }
                Some(other) if other.head.generation >= head.generation => {}
                _ => best = Some(CurrentHead { head: *head, slot }),
            },
        }
    }
    best.ok_or_else(|| NoUsableSlot {
        claimed_seq,
        reason: reasons.join("; "),
    })
}

/// The one writer of the head file: alternates slots, `pwrite` + `fdatasync`.
#[derive(Debug)]
pub(crate) struct HeadWriter {
    path: PathBuf,
    file: File,
    /// Where the next write goes: never the slot holding `durable`.
    next_slot: usize,
    /// The newest slot known durable.
    durable: SignedHead,
}

impl HeadWriter {
    /// Makes the head file of a new ledger: slot A = generation 1, floor and
    /// ceiling at the origin; slot B empty. Written whole to a temporary file,
    /// synced, renamed into place and the directory synced: afterwards the
    /// file only ever changes in place.
    pub(crate) fn create(path: &Path, key: &LedgerSigningKey) -> Result<HeadWriter, LedgerError> {
        let head = SignedHead::sign(key, 1, ChainLink::ORIGIN, ChainLink::ORIGIN);
        let mut bytes = vec![0u8; HEAD_FILE_LEN];
        bytes[..HEAD_SLOT_LEN].copy_from_slice(&head.to_slot_bytes());
        seam_home::file::replace(path, &bytes, seam_home::file::OWNER_ONLY)?;
        HeadWriter::open(path, CurrentHead { head, slot: 0 })
    }

    /// Opens an existing head file whose head in force is `current`.
    pub(crate) fn open(path: &Path, current: CurrentHead) -> Result<HeadWriter, LedgerError> {
        let file = OpenOptions::new()
            .read(true)
            .write(true)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(path)
            .map_err(io_err("open head file for writing", path))?;
        let meta = file.metadata().map_err(io_err("stat head file", path))?;
        if !meta.is_file() || meta.len() != HEAD_FILE_LEN as u64 {
            return Err(LedgerError::HeadWriteFailed {
                path: path.to_owned(),
                message: format!(
                    "it is not a regular file of {HEAD_FILE_LEN} bytes (length {})",
                    meta.len()
                ),
            });
        }
        Ok(HeadWriter {
            path: path.to_owned(),
            file,
            next_slot: 1 - current.slot,
            durable: current.head,
        })
    }

    /// The newest slot known durable.
    pub(crate) fn durable(&self) -> SignedHead {
        self.durable
    }

    /// Signs {next generation, floor, ceiling}, writes it over the slot that
    /// does not hold the newest durable head, and `fdatasync`s. Only when
    /// that succeeded does the next write go to the other slot: after a
    /// failure the same slot is written again.
    pub(crate) fn write(
        &mut self,
        key: &LedgerSigningKey,
        floor: ChainLink,
        ceiling: ChainLink,
    ) -> Result<SignedHead, LedgerError> {
        let head = SignedHead::sign(key, self.durable.generation + 1, floor, ceiling);
        head.check_consistent()
            .map_err(|defect| LedgerError::HeadWriteFailed {
                path: self.path.clone(),
                message: format!("internal: refusing to write a head where {defect}"),
            })?;
        let offset = (self.next_slot * HEAD_SLOT_LEN) as u64;
        self.file
            .write_all_at(&head.to_slot_bytes()[..SLOT_BODY_LEN], offset)
            .map_err(io_err("write a slot of head file", &self.path))?;
        self.file
            .sync_data()
            .map_err(io_err("sync head file", &self.path))?;
        self.durable = head;
        self.next_slot = 1 - self.next_slot;
        Ok(head)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::os::unix::fs::MetadataExt;

    fn key(dir: &Path) -> LedgerSigningKey {
        crate::keys::create_signing_key(&dir.join("k")).unwrap()
    }

    fn link(seq: u64) -> ChainLink {
        if seq == 0 {
            return ChainLink::ORIGIN;
        }
        ChainLink::new(seq, Sha256Digest::of(&seq.to_be_bytes()))
    }

    fn slots(path: &Path) -> [Result<SignedHead, HeadDefect>; 2] {
        match read_head_file(path).unwrap() {
            HeadFileState::Slots(slots) => *slots,
            other => panic!("not a head file: {other:?}"),
        }
    }

    #[test]
    fn slots_round_trip_and_writes_alternate() {
        let dir = tempfile::tempdir().unwrap();
        let key = key(dir.path());
        let public = key.public_key();
        let path = dir.path().join("head");
        let mut writer = HeadWriter::create(&path, &key).unwrap();
        assert_eq!(
            std::fs::metadata(&path).unwrap().len(),
            HEAD_FILE_LEN as u64
        );
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        let [a, b] = slots(&path);
        assert_eq!(a.unwrap().generation, 1);
        assert_eq!(b, Err(HeadDefect::Empty));

        let second = writer.write(&key, link(0), link(3)).unwrap();
        let [a, b] = slots(&path);
        assert_eq!((a.unwrap().generation, b.clone().unwrap()), (1, second));
        let third = writer.write(&key, link(3), link(3)).unwrap();
        let [a, b] = slots(&path);
        assert_eq!((a.clone().unwrap(), b.clone().unwrap()), (third, second));
        let current = select_head(&[a, b], &public).unwrap();
        assert_eq!((current.slot, current.head), (0, third));
        assert!(third.is_signed_by(&public));
        let forged = SignedHead {
            ceiling: link(9),
            ..third
        };
        assert!(!forged.is_signed_by(&public));
        assert_eq!(
            SignedHead::from_slot_bytes(&third.to_slot_bytes()),
            Ok(third)
        );
    }

    #[test]
    fn a_torn_slot_is_told_from_a_forged_one() {
        let dir = tempfile::tempdir().unwrap();
        let key = key(dir.path());
        let head = SignedHead::sign(&key, 7, link(2), link(5));
        let mut torn = head.to_slot_bytes();
        torn[FLOOR_AT + 3] ^= 0x40;
        assert_eq!(
            SignedHead::from_slot_bytes(&torn),
            Err(HeadDefect::Checksum)
        );
        let mut padded = head.to_slot_bytes();
        padded[HEAD_SLOT_LEN - 1] = 1;
        assert!(matches!(
            SignedHead::from_slot_bytes(&padded),
            Err(HeadDefect::Inconsistent(_))
        ));
        let mut other_format = head.to_slot_bytes();
        other_format[0] = b'X';
        assert_eq!(
            SignedHead::from_slot_bytes(&other_format),
            Err(HeadDefect::UnknownFormat)
        );
    }

    #[test]
    fn the_earlier_json_format_is_named() {
        let v1 = br#"{"format":"seam-ledger-head/v1","seq":3,"hash":"00","signature":"00"}"#;
        assert_eq!(parse_head_file(v1), Err(HeadDefect::EarlierFormat));
        assert_eq!(
            parse_head_file(b"short"),
            Err(HeadDefect::FileLength { len: 5 })
        );
    }

    #[test]
    fn inconsistent_heads_are_not_written() {
        let dir = tempfile::tempdir().unwrap();
        let key = key(dir.path());
        let path = dir.path().join("head");
        let mut writer = HeadWriter::create(&path, &key).unwrap();
        assert!(writer.write(&key, link(4), link(3)).is_err());
        // The failed write did not move on: the next goes to slot B.
        let ok = writer.write(&key, link(3), link(4)).unwrap();
        assert_eq!(ok.generation, 2);
        assert_eq!(slots(&path)[1].clone().unwrap(), ok);
    }

    #[test]
    fn equal_generations_with_different_contents_are_refused() {
        let dir = tempfile::tempdir().unwrap();
        let key = key(dir.path());
        let a = SignedHead::sign(&key, 4, link(1), link(2));
        let b = SignedHead::sign(&key, 4, link(1), link(3));
        let refused = select_head(&[Ok(a), Ok(b)], &key.public_key()).unwrap_err();
        assert!(refused.reason.contains("generation 4"), "{refused:?}");
        assert_eq!(
            select_head(&[Ok(a), Ok(a)], &key.public_key())
                .unwrap()
                .head,
            a
        );
    }
}
