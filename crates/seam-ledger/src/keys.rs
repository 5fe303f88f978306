//! The ledger's Ed25519 key pair and its key file.
//!
//! The key file `<seam_home>/keys/ledger.key` holds exactly the 32-byte seed,
//! mode 0600, owned by the user who runs seam, in a 0700 directory. It is made
//! once, atomically (written to a temporary name, synced, then hard-linked to
//! its name so two racing first starts cannot both win), and never rewritten.

use std::fmt;
use std::fs::File;
use std::io::Read;
use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::str::FromStr;

use ed25519_dalek::{Signature, Signer, SigningKey, VerifyingKey};
use zeroize::Zeroize;

use crate::digest::Ed25519Signature;
use crate::error::{LedgerError, io_err};
use seam_home::file::sync_dir;

/// The private half: signs record hashes and heads. Its `Debug` shows only the
/// public key; the secret never leaves this type except into the key file.
pub struct LedgerSigningKey(SigningKey);

/// The public half: what `seam ledger pubkey` prints and `verify --pubkey`
/// takes. Shown and parsed as 64 hex digits.
#[derive(Clone, Copy, PartialEq, Eq)]
pub struct LedgerPublicKey(VerifyingKey);

impl LedgerSigningKey {
    fn from_seed(mut seed: [u8; 32]) -> LedgerSigningKey {
        let key = SigningKey::from_bytes(&seed);
        seed.zeroize();
        LedgerSigningKey(key)
    }

    pub fn public_key(&self) -> LedgerPublicKey {
        LedgerPublicKey(self.0.verifying_key())
    }

    pub(crate) fn sign(&self, message: &[u8]) -> Ed25519Signature {
        Ed25519Signature(self.0.sign(message).to_bytes())
    }
}

impl fmt::Debug for LedgerSigningKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("LedgerSigningKey")
            .field("public", &self.public_key())
            .field("secret", &"<hidden>")
            .finish()
    }
}

impl LedgerPublicKey {
    pub fn to_bytes(&self) -> [u8; 32] {
        self.0.to_bytes()
    }

    pub fn from_bytes(bytes: &[u8; 32]) -> Result<LedgerPublicKey, LedgerError> {
        VerifyingKey::from_bytes(bytes)
            .map(LedgerPublicKey)
            .map_err(|e| LedgerError::BadPublicKey {
                text: hex::encode(bytes),
                reason: e.to_string(),
            })
    }

    /// Whether `signature` is this key's signature of `message` (strict
    /// verification: no malleable or small-order forms accepted).
    pub fn verifies(&self, message: &[u8], signature: &Ed25519Signature) -> bool {
        let signature = Signature::from_bytes(signature.as_bytes());
        self.0.verify_strict(message, &signature).is_ok()
    }
}

impl fmt::Display for LedgerPublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&hex::encode(self.0.as_bytes()))
    }
}

impl fmt::Debug for LedgerPublicKey {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "LedgerPublicKey({self})")
    }
}

impl FromStr for LedgerPublicKey {
    type Err = LedgerError;

    /// 64 hex digits; surrounding whitespace is ignored.
    fn from_str(text: &str) -> Result<LedgerPublicKey, LedgerError> {
        let trimmed = text.trim();
        let mut bytes = [0u8; 32];
        hex::decode_to_slice(trimmed, &mut bytes).map_err(|e| LedgerError::BadPublicKey {
            text: crate::clipped(trimmed, 80),
            reason: e.to_string(),
        })?;
        LedgerPublicKey::from_bytes(&bytes)
    }
}

/// Reads the signing key, checking that only its owner (this user) can read it.
/// `Ok(None)` when there is no key file.
pub(crate) fn read_signing_key(path: &Path) -> Result<Option<LedgerSigningKey>, LedgerError> {
    let mut file = match File::open(path) {
        Ok(file) => file,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return Ok(None),
        Err(e) => return Err(io_err("open signing key", path)(e)),
    };
    let meta = file.metadata().map_err(io_err("stat signing key", path))?;
    let uid = rustix::process::geteuid().as_raw();
    if meta.uid() != uid {
        return Err(LedgerError::ForeignKeyFile {
            path: path.to_owned(),
            owner: meta.uid(),
            uid,
        });
    }
    if meta.mode() & 0o077 != 0 {
        return Err(LedgerError::InsecureKeyFile {
            path: path.to_owned(),
            mode: meta.mode() & 0o7777,
        });
    }
    if meta.len() != 32 {
        return Err(LedgerError::MalformedKey {
            path: path.to_owned(),
            reason: format!("it is {} bytes long, not 32", meta.len()),
        });
    }
    let mut seed = [0u8; 32];
    let read = file.read_exact(&mut seed);
    if let Err(e) = read {
        seed.zeroize();
        return Err(io_err("read signing key", path)(e));
    }
    Ok(Some(LedgerSigningKey::from_seed(seed)))
}

/// Makes a new signing key at `path` unless one appears there meanwhile, and
/// returns whichever key is at `path` afterwards.
pub(crate) fn create_signing_key(path: &Path) -> Result<LedgerSigningKey, LedgerError> {
    let dir = path.parent().unwrap_or(Path::new("."));
    let mut seed = [0u8; 32];
    getrandom::fill(&mut seed).map_err(|e| LedgerError::Io {
        action: "get random bytes for a new signing key",
        path: path.to_owned(),
        cause: std::io::Error::other(e.to_string()),
    })?;
    // Written beside it, synced, then hard-linked to its name: two racing first starts
    // cannot both win. If someone else made the key first, theirs is used.
    let installed = seam_home::file::install_new(path, &seed);
    seed.zeroize();
    installed?;
    sync_dir(dir)?;
    read_signing_key(path)?.ok_or_else(|| LedgerError::KeyMissing {
        path: path.to_owned(),
        ledger_has_records: false,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn debug_hides_the_secret() {
        let key = LedgerSigningKey::from_seed([7u8; 32]);
        let shown = format!("{key:?}");
        assert!(shown.contains(&key.public_key().to_string()));
        assert!(!shown.contains(&hex::encode([7u8; 32])));
        assert!(!shown.contains("[7, 7"), "{shown}");
    }

    #[test]
    fn public_key_text_round_trips() {
        let key = LedgerSigningKey::from_seed([9u8; 32]).public_key();
        let text = format!(" {key}\n");
        assert_eq!(text.parse::<LedgerPublicKey>().unwrap(), key);
        assert!("12ab".parse::<LedgerPublicKey>().is_err());
    }

    #[test]
    fn signatures_verify_only_for_their_message_and_key() {
        let key = LedgerSigningKey::from_seed([1u8; 32]);
        let other = LedgerSigningKey::from_seed([2u8; 32]);
        let sig = key.sign(b"message");
        assert!(key.public_key().verifies(b"message", &sig));
        assert!(!key.public_key().verifies(b"messagf", &sig));
        assert!(!other.public_key().verifies(b"message", &sig));
    }
}
