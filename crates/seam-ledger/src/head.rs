//! The signed head: the latest (seq, hash), signed, in a file of its own.

use std::path::Path;

use serde::{Deserialize, Serialize};

use crate::digest::{Ed25519Signature, Sha256Digest};
use crate::error::{LedgerError, io_err};
use crate::fsutil::replace_atomically;
use crate::keys::{LedgerPublicKey, LedgerSigningKey};
use crate::record::head_message;

/// The format tag at the start of every head file.
pub const HEAD_FORMAT: &str = "seam-ledger-head/v1";

/// The ledger's latest (seq, hash) as the key holder signed it. The empty
/// ledger's head is (0, all zeros).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SignedHead {
    pub seq: u64,
    pub hash: Sha256Digest,
    /// Ed25519 over `be64(19) ‖ "seam-ledger/head/v1" ‖ be64(seq) ‖ hash`.
    pub signature: Ed25519Signature,
}

#[derive(Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct HeadFile {
    format: String,
    seq: u64,
    hash: Sha256Digest,
    signature: Ed25519Signature,
}

impl HeadFile {
    fn head(&self) -> SignedHead {
        SignedHead {
            seq: self.seq,
            hash: self.hash,
            signature: self.signature,
        }
    }
}

impl SignedHead {
    pub(crate) fn sign(key: &LedgerSigningKey, seq: u64, hash: Sha256Digest) -> SignedHead {
        SignedHead {
            seq,
            hash,
            signature: key.sign(&head_message(seq, &hash)),
        }
    }

    /// Whether `key` signed this (seq, hash).
    pub fn is_signed_by(&self, key: &LedgerPublicKey) -> bool {
        key.verifies(&head_message(self.seq, &self.hash), &self.signature)
    }
}

/// What is at the head file's place.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum HeadFileState {
    Missing,
    Malformed(String),
    Present(SignedHead),
}

pub(crate) fn read_head_file(path: &Path) -> Result<HeadFileState, LedgerError> {
    let bytes = match std::fs::read(path) {
        Ok(bytes) => bytes,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(HeadFileState::Missing),
        Err(e) => return Err(io_err("read head file", path)(e)),
    };
    if bytes.len() > 4096 {
        return Ok(HeadFileState::Malformed(format!(
            "it is {} bytes long",
            bytes.len()
        )));
    }
    match serde_json::from_slice::<HeadFile>(&bytes) {
        Ok(file) if file.format == HEAD_FORMAT => Ok(HeadFileState::Present(file.head())),
        Ok(file) => Ok(HeadFileState::Malformed(format!(
            "unknown format {:?}",
            file.format.chars().take(40).collect::<String>()
        ))),
        Err(e) => Ok(HeadFileState::Malformed(e.to_string())),
    }
}

pub(crate) fn write_head_file(path: &Path, head: &SignedHead) -> Result<(), LedgerError> {
    let file = HeadFile {
        format: HEAD_FORMAT.to_owned(),
        seq: head.seq,
        hash: head.hash,
        signature: head.signature,
    };
    let mut text = serde_json::to_string(&file).map_err(|e| LedgerError::HeadWriteFailed {
        path: path.to_owned(),
        message: e.to_string(),
    })?;
    text.push('\n');
    let tmp = path.with_extension("tmp");
    replace_atomically(path, &tmp, text.as_bytes())
}

/// Parses head-file text (for fuzzing and tests): `Some` only for a well-formed file.
pub fn parse_head_file(bytes: &[u8]) -> Option<SignedHead> {
    match serde_json::from_slice::<HeadFile>(bytes) {
        Ok(file) if file.format == HEAD_FORMAT => Some(file.head()),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn head_file_round_trips_and_is_owner_only() {
        use std::os::unix::fs::MetadataExt;
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("head");
        let key = crate::keys::create_signing_key(&dir.path().join("k")).unwrap();
        let head = SignedHead::sign(&key, 42, Sha256Digest::of(b"x"));
        write_head_file(&path, &head).unwrap();
        assert_eq!(read_head_file(&path).unwrap(), HeadFileState::Present(head));
        assert!(head.is_signed_by(&key.public_key()));
        assert_eq!(std::fs::metadata(&path).unwrap().mode() & 0o777, 0o600);
        let forged = SignedHead { seq: 43, ..head };
        assert!(!forged.is_signed_by(&key.public_key()));
        std::fs::write(&path, b"{\"format\":\"x\"}").unwrap();
        assert!(matches!(
            read_head_file(&path).unwrap(),
            HeadFileState::Malformed(_)
        ));
        std::fs::remove_file(&path).unwrap();
        assert_eq!(read_head_file(&path).unwrap(), HeadFileState::Missing);
    }
}
