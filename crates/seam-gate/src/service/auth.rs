//! The bearer token of the TCP listener, and who may use the unix socket.

use std::io::{ErrorKind, Read};
use std::os::unix::fs::{MetadataExt, OpenOptionsExt, PermissionsExt};
use std::path::{Path, PathBuf};

use subtle::ConstantTimeEq;

use super::ServiceError;

/// Where the token lives, below seam's home (`keys/` is protected by the
/// default policy: no governed tool can read it).
pub const TOKEN_FILE: &str = seam_home::layout::GATE_TOKEN;

/// Where the turn opener lives, below seam's home: the secret that opens a turn (and lets
/// a call run without one). The launcher of `seam ask` reads it before the agent's walls go
/// up, in a process of its own; the agent's walls never grant `keys/`.
pub const OPENER_FILE: &str = seam_home::layout::TURN_OPENER;

/// Random bytes in a token (shown as twice as many hex digits).
const TOKEN_BYTES: usize = 32;

/// The secret a TCP client must present as `Authorization: Bearer <token>`.
/// Its `Debug` does not show it.
#[derive(Clone)]
pub struct BearerToken {
    hex: String,
}

impl std::fmt::Debug for BearerToken {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("BearerToken(…)")
    }
}

impl BearerToken {
    /// The token in `seam_home`, made on first use: 32 random bytes as hex,
    /// written to a new 0600 file in a 0700 `keys/`. An existing token file
    /// must be a regular file owned by this user and readable by nobody else.
    pub fn load_or_create(seam_home: &Path) -> Result<(BearerToken, bool), ServiceError> {
        Self::load_or_create_at(&token_path(seam_home))
    }

    /// The turn opener in `seam_home` ([`OPENER_FILE`]), made on first use like the token.
    pub fn opener(seam_home: &Path) -> Result<BearerToken, ServiceError> {
        Self::load_or_create_at(&seam_home::SeamHome::new(seam_home).turn_opener()).map(|(t, _)| t)
    }

    /// [`BearerToken::load_or_create`] for a secret file at `path`.
    pub fn load_or_create_at(path: &Path) -> Result<(BearerToken, bool), ServiceError> {
        let path = path.to_path_buf();
        let keys = path.parent().unwrap_or(Path::new("."));
        seam_home::file::create_private_dir(keys)
            .map_err(|e| ServiceError::io(e.action, &e.path, e.source))?;
        match Self::read(&path) {
            Ok(token) => return Ok((token, false)),
            Err(ServiceError::Io { source, .. }) if source.kind() == ErrorKind::NotFound => {}
            Err(e) => return Err(e),
        }
        let mut bytes = [0u8; TOKEN_BYTES];
        getrandom::fill(&mut bytes).map_err(|e| ServiceError::Token {
            path: path.clone(),
            reason: format!("no randomness for a new token: {e}"),
        })?;
        let token = BearerToken {
            hex: hex::encode(bytes),
        };
        // Written beside its name, synced and linked into place: a reader never sees half a
        // token, and of two first starts the one that links first wins; the other reads it.
        let made = seam_home::file::install_new(&path, format!("{}\n", token.hex).as_bytes())
            .map_err(|e| ServiceError::io(e.action, &e.path, e.source))?;
        if !made {
            return Ok((Self::read(&path)?, false));
        }
        Ok((token, true))
    }

    /// Reads an existing token file, refusing one that others could read.
    pub fn read(path: &Path) -> Result<BearerToken, ServiceError> {
        let mut file = std::fs::OpenOptions::new()
            .read(true)
            .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
            .open(path)
            .map_err(|e| ServiceError::io("open", path, e))?;
        let meta = file
            .metadata()
            .map_err(|e| ServiceError::io("stat", path, e))?;
        let bad = |reason: String| ServiceError::Token {
            path: path.to_path_buf(),
            reason,
        };
        if !meta.is_file() {
            return Err(bad("it is not a regular file".into()));
        }
        let me = rustix::process::geteuid().as_raw();
        if meta.uid() != me {
            return Err(bad(format!(
                "it belongs to uid {}, not to this user ({me})",
                meta.uid()
            )));
        }
        if meta.permissions().mode() & 0o077 != 0 {
            return Err(bad(format!(
                "its mode is {:o}: others could read it (chmod 600 it, or delete it to \
                 make a new one)",
                meta.permissions().mode() & 0o777
            )));
        }
        let mut text = String::new();
        Read::take(&mut file, 1024)
            .read_to_string(&mut text)
            .map_err(|e| ServiceError::io("read", path, e))?;
        let hex = text.trim();
        if hex.len() != TOKEN_BYTES * 2 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
            return Err(bad(format!(
                "it does not hold {} hex digits (delete it to make a new one)",
                TOKEN_BYTES * 2
            )));
        }
        Ok(BearerToken {
            hex: hex.to_ascii_lowercase(),
        })
    }

    /// Does this `Authorization` header value carry the token? The
    /// comparison of the secret takes the same time wherever it differs.
    pub fn admits(&self, authorization: Option<&[u8]>) -> bool {
        let Some(value) = authorization else {
            return false;
        };
        let Some(presented) = value
            .strip_prefix(b"Bearer ")
            .or_else(|| value.strip_prefix(b"bearer "))
        else {
            return false;
        };
        // ct_eq of slices of different lengths is false without a data-dependent
        // early exit; the length of the token is public (64).
        bool::from(presented.trim_ascii().ct_eq(self.hex.as_bytes()))
    }

    /// Is this header value (the bare secret, no scheme) the token? Constant time.
    pub fn is(&self, value: Option<&[u8]>) -> bool {
        value.is_some_and(|v| bool::from(v.trim_ascii().ct_eq(self.hex.as_bytes())))
    }

    /// The token itself, for a client that has read the file.
    pub fn secret(&self) -> &str {
        &self.hex
    }
}

/// The path of the token file in `seam_home`.
pub fn token_path(seam_home: &Path) -> PathBuf {
    seam_home::SeamHome::new(seam_home).gate_token()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_token_is_made_once_owner_only_and_admits_only_itself() {
        let dir = tempfile::tempdir().unwrap();
        let (t, created) = BearerToken::load_or_create(dir.path()).unwrap();
        assert!(created);
        let path = token_path(dir.path());
        let mode = std::fs::metadata(&path).unwrap().permissions().mode() & 0o777;
        assert_eq!(mode, 0o600);
        let (again, created) = BearerToken::load_or_create(dir.path()).unwrap();
        assert!(!created);
        assert_eq!(again.secret(), t.secret());
        assert_eq!(t.secret().len(), 64);

        let good = format!("Bearer {}", t.secret());
        assert!(t.admits(Some(good.as_bytes())));
        assert!(!t.admits(None));
        assert!(
            !t.admits(Some(t.secret().as_bytes())),
            "the scheme is required"
        );
        let mut wrong = good.clone().into_bytes();
        let last = wrong.len() - 1;
        wrong[last] = if wrong[last] == b'0' { b'1' } else { b'0' };
        assert!(!t.admits(Some(&wrong)));
        assert!(!t.admits(Some(&good.as_bytes()[..good.len() - 1])));
        assert!(!t.admits(Some(b"Bearer ")));
        assert!(!format!("{t:?}").contains(t.secret()));
    }

    #[test]
    fn a_token_file_others_can_read_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        BearerToken::load_or_create(dir.path()).unwrap();
        let path = token_path(dir.path());
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o644)).unwrap();
        let err = BearerToken::load_or_create(dir.path()).unwrap_err();
        assert!(err.to_string().contains("others could read it"), "{err}");
    }
}
