//! Where the ledger's files live in seam's home.

use std::path::{Path, PathBuf};

use seam_home::SeamHome;

/// The ledger's files, all under seam's home:
///
/// ```text
/// <seam_home>/keys/ledger.key        Ed25519 seed, 32 bytes, 0600 (dir 0700)
/// <seam_home>/ledger/ledger.sqlite   the records (WAL; -wal and -shm beside it), 0600
/// <seam_home>/ledger/head            the signed head: two 4 KiB slots, written in place
/// <seam_home>/ledger/lock            flock'ed by the one writer
/// ```
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LedgerPaths {
    pub keys_dir: PathBuf,
    pub key_file: PathBuf,
    pub ledger_dir: PathBuf,
    pub db_file: PathBuf,
    pub head_file: PathBuf,
    pub lock_file: PathBuf,
}

impl LedgerPaths {
    /// The paths in seam's home `seam_home`.
    pub fn new(seam_home: &Path) -> LedgerPaths {
        LedgerPaths::of_ledger_dir(&SeamHome::new(seam_home).ledger())
    }

    /// The paths of a ledger directory on its own (e.g. a copy checked
    /// elsewhere with a public key). Its key paths point at `keys/` beside it.
    pub fn of_ledger_dir(ledger_dir: &Path) -> LedgerPaths {
        let keys_dir = SeamHome::new(ledger_dir.parent().unwrap_or(Path::new("."))).keys();
        LedgerPaths {
            key_file: keys_dir.join("ledger.key"),
            keys_dir,
            ledger_dir: ledger_dir.to_owned(),
            db_file: ledger_dir.join("ledger.sqlite"),
            head_file: ledger_dir.join("head"),
            lock_file: ledger_dir.join("lock"),
        }
    }

    /// The database's WAL and shared-memory files.
    pub(crate) fn db_companions(&self) -> [PathBuf; 2] {
        let mut wal = self.db_file.clone().into_os_string();
        wal.push("-wal");
        let mut shm = self.db_file.clone().into_os_string();
        shm.push("-shm");
        [wal.into(), shm.into()]
    }
}
