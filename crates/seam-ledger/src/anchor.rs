//! External anchors: the signed head, copied out of seam's home, that a later verification
//! holds the ledger to.
//!
//! [`crate::verify`] cannot tell a *consistent* rollback from an honest ledger: cut the records
//! after some seq and put back the head file as it was then, and every record and the head check
//! out (a head file only proves what it last said, not that it is the newest). An anchor closes
//! that gap from outside: [`crate::anchor`] (`seam ledger head`) gives the current signed head
//! as one line of JSON, which the operator keeps somewhere the ledger's host cannot rewrite
//! ([`append_anchor`]: `--append FILE`); [`crate::verify_against`] (`verify --against FILE`)
//! takes the newest head in that file ([`read_anchor_file`]) and fails when the ledger is behind
//! it or disagrees with it at its seq (see [`crate::LedgerReader::verify_against`]).
//!
//! An anchor line:
//!
//! ```text
//! {"format":"seam-ledger-anchor/v1","key":"<64 hex>","generation":12,
//!  "floor":{"seq":40,"hash":"<64 hex>"},"ceiling":{"seq":40,"hash":"<64 hex>"},
//!  "signature":"<128 hex>"}
//! ```
//!
//! (on one line): the ledger's public key and the [`SignedHead`] as the head file holds it, its
//! signature over [`SignedHead::message`] by that key. The anchor's seq is the head's floor: the
//! last record known committed when it was signed. Anyone with the public key can check a line;
//! nobody without the private key can make one.

use std::fs::OpenOptions;
use std::io::{Read, Seek, SeekFrom, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};

use crate::digest::{Ed25519Signature, Sha256Digest};
use crate::head::{ChainLink, SignedHead};
use crate::keys::LedgerPublicKey;

/// The format marker of an anchor line.
pub const ANCHOR_FORMAT: &str = "seam-ledger-anchor/v1";

/// The largest anchor file read (an anchor an hour for a century is well under it).
pub const MAX_ANCHOR_FILE_BYTES: u64 = 512 << 20;

/// A signed head together with the public key of the ledger that signed it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadAnchor {
    /// The ledger's public key (its key id).
    pub key: LedgerPublicKey,
    /// The head as the head file held it.
    pub head: SignedHead,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct AnchorLine {
    format: String,
    key: String,
    generation: u64,
    floor: LinkLine,
    ceiling: LinkLine,
    signature: Ed25519Signature,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct LinkLine {
    seq: u64,
    hash: Sha256Digest,
}

impl From<ChainLink> for LinkLine {
    fn from(link: ChainLink) -> LinkLine {
        LinkLine {
            seq: link.seq,
            hash: link.hash,
        }
    }
}

impl HeadAnchor {
    /// The anchor's seq: the head's floor, the last record known committed when it was signed.
    pub fn seq(&self) -> u64 {
        self.head.floor.seq
    }

    /// True when the head's signature is by the anchor's key.
    pub fn is_signed(&self) -> bool {
        self.head.is_signed_by(&self.key)
    }

    /// The anchor as one line of JSON (no newline), the form [`HeadAnchor::parse_line`] reads.
    pub fn to_json_line(&self) -> String {
        let line = AnchorLine {
            format: ANCHOR_FORMAT.to_owned(),
            key: self.key.to_string(),
            generation: self.head.generation,
            floor: self.head.floor.into(),
            ceiling: self.head.ceiling.into(),
            signature: self.head.signature,
        };
        serde_json::to_string(&line).unwrap_or_default()
    }

    /// Parses one anchor line. Checks its form (the format marker, every field, nothing else),
    /// not its signature.
    pub fn parse_line(line: &str) -> Result<HeadAnchor, String> {
        let parsed: AnchorLine =
            serde_json::from_str(line.trim()).map_err(|e| format!("not an anchor line ({e})"))?;
        if parsed.format != ANCHOR_FORMAT {
            return Err(format!(
                "format {:?}, not {ANCHOR_FORMAT:?}",
                crate::clipped(&parsed.format, 40)
            ));
        }
        let key = parsed
            .key
            .parse::<LedgerPublicKey>()
            .map_err(|e| format!("key: {e}"))?;
        let head = SignedHead {
            generation: parsed.generation,
            floor: ChainLink::new(parsed.floor.seq, parsed.floor.hash),
            ceiling: ChainLink::new(parsed.ceiling.seq, parsed.ceiling.hash),
            signature: parsed.signature,
        };
        if head.floor.seq > head.ceiling.seq {
            return Err("its floor is beyond its ceiling".to_owned());
        }
        Ok(HeadAnchor { key, head })
    }
}

/// Why an anchor could not be written, read or used. Each names the file (and the line).
#[derive(Debug, thiserror::Error)]
pub enum AnchorError {
    #[error("cannot {action} the anchor file {}", path.display())]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the anchor file {} is {len} bytes long; the limit is {MAX_ANCHOR_FILE_BYTES}", path.display())]
    TooLarge { path: PathBuf, len: u64 },
    #[error("anchor file {}, line {line}: {reason}", path.display())]
    Malformed {
        path: PathBuf,
        line: usize,
        reason: String,
    },
    #[error(
        "{origin}: the head it holds (generation {generation}, seq {seq}) is not signed by the \
         ledger's key {key}: it was altered, or forged"
    )]
    BadSignature {
        /// `anchor file F, line N`, or `the anchor` for one given in code.
        origin: String,
        generation: u64,
        seq: u64,
        key: Box<LedgerPublicKey>,
    },
    #[error(
        "anchor file {}, lines {first} and {second}: two different heads of generation \
         {generation}, both signed by the ledger's key: the ledger was forked",
        path.display()
    )]
    Forked {
        path: PathBuf,
        first: usize,
        second: usize,
        generation: u64,
    },
    #[error(
        "the anchor file {} holds no head of the ledger with key {key}{}",
        path.display(),
        if *other_keys > 0 {
            format!(" ({other_keys} line(s) of other ledgers' keys)")
        } else {
            String::new()
        }
    )]
    NoAnchor {
        path: PathBuf,
        key: Box<LedgerPublicKey>,
        other_keys: usize,
    },
}

/// An anchor read from a file: the newest head of the ledger's key in it, and where it was.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FileAnchor {
    pub anchor: HeadAnchor,
    pub path: PathBuf,
    /// 1-based.
    pub line: usize,
}

/// Appends `anchor` to `path` as one line (made if missing; a last line without a newline is
/// ended first), then syncs the file.
pub fn append_anchor(path: &Path, anchor: &HeadAnchor) -> Result<(), AnchorError> {
    let io = |action: &'static str| {
        move |source| AnchorError::Io {
            action,
            path: path.to_owned(),
            source,
        }
    };
    let mut file = OpenOptions::new()
        .read(true)
        .append(true)
        .create(true)
        .open(path)
        .map_err(io("open"))?;
    let len = file.metadata().map_err(io("examine"))?.len();
    let mut text = String::new();
    if len > 0 {
        let mut last = [0u8; 1];
        file.seek(SeekFrom::Start(len - 1)).map_err(io("read"))?;
        file.read_exact(&mut last).map_err(io("read"))?;
        if last[0] != b'\n' {
            text.push('\n');
        }
    }
    text.push_str(&anchor.to_json_line());
    text.push('\n');
    file.write_all(text.as_bytes()).map_err(io("append to"))?;
    file.sync_all().map_err(io("sync"))
}

/// The newest head of the ledger with `key` in the anchor file at `path`: every non-blank line
/// must be an anchor line; lines of other keys are passed over; a line of `key` must be signed by
/// it; the newest is the one with the highest generation (two different heads of one generation
/// are a fork, an error).
pub fn read_anchor_file(path: &Path, key: &LedgerPublicKey) -> Result<FileAnchor, AnchorError> {
    let io = |action: &'static str| {
        move |source| AnchorError::Io {
            action,
            path: path.to_owned(),
            source,
        }
    };
    let file = std::fs::File::open(path).map_err(io("open"))?;
    let len = file.metadata().map_err(io("examine"))?.len();
    if len > MAX_ANCHOR_FILE_BYTES {
        return Err(AnchorError::TooLarge {
            path: path.to_owned(),
            len,
        });
    }
    let mut text = String::new();
    file.take(MAX_ANCHOR_FILE_BYTES)
        .read_to_string(&mut text)
        .map_err(io("read"))?;
    let mut newest: Option<FileAnchor> = None;
    let mut other_keys = 0;
    for (i, line) in text.lines().enumerate() {
        let number = i + 1;
        if line.trim().is_empty() {
            continue;
        }
        let anchor = HeadAnchor::parse_line(line).map_err(|reason| AnchorError::Malformed {
            path: path.to_owned(),
            line: number,
            reason,
        })?;
        if anchor.key != *key {
            other_keys += 1;
            continue;
        }
        if !anchor.is_signed() {
            return Err(AnchorError::BadSignature {
                origin: format!("anchor file {}, line {number}", path.display()),
                generation: anchor.head.generation,
                seq: anchor.seq(),
                key: Box::new(*key),
            });
        }
        match &newest {
            Some(best)
                if best.anchor.head.generation == anchor.head.generation
                    && best.anchor.head != anchor.head =>
            {
                return Err(AnchorError::Forked {
                    path: path.to_owned(),
                    first: best.line,
                    second: number,
                    generation: anchor.head.generation,
                });
            }
            Some(best) if best.anchor.head.generation >= anchor.head.generation => {}
            _ => {
                newest = Some(FileAnchor {
                    anchor,
                    path: path.to_owned(),
                    line: number,
                });
            }
        }
    }
    newest.ok_or_else(|| AnchorError::NoAnchor {
        path: path.to_owned(),
        key: Box::new(*key),
        other_keys,
    })
}
