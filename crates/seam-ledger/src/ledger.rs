//! [`Ledger`]: the one writer. Group commit on a writer thread; the signed head
//! rewritten by a second thread after commits.

use std::path::Path;
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::Duration;

use rusqlite::{Connection, TransactionBehavior};

use crate::digest::{Sha256Digest, canonical_json};
use crate::error::LedgerError;
use crate::fsutil::{WriterLock, create_private_file, ensure_private_dir, narrow_mode, sync_dir};
use crate::head::{HeadFileState, SignedHead, read_head_file, write_head_file};
use crate::keys::{LedgerPublicKey, LedgerSigningKey, create_signing_key, read_signing_key};
use crate::paths::LedgerPaths;
use crate::reader::LedgerReader;
use crate::record::{Entry, HashedFields, Record, record_hash};
use crate::store;
use crate::time::Timestamp;
use crate::verify::{
    ChainChecker, VerifyError, VerifyReport, check_head_against_rows, check_rows, read_signed_head,
};

/// Most appends committed in one transaction.
const MAX_BATCH: usize = 512;
/// How long `open` waits for the writer lock before it answers `Busy`.
const LOCK_PATIENCE: Duration = Duration::from_secs(2);

/// The ledger, open for appending. One per seam home at a time (an exclusive
/// lock enforces it). `Send + Sync`: share it behind an `Arc`; every thread
/// may call [`Ledger::append`] at once.
pub struct Ledger {
    paths: LedgerPaths,
    public_key: LedgerPublicKey,
    requests: Option<Sender<AppendRequest>>,
    writer: Option<JoinHandle<()>>,
    head: Arc<HeadShared>,
    head_writer: Option<JoinHandle<()>>,
    recovery: Option<HeadRecovery>,
    _lock: WriterLock,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("ledger_dir", &self.paths.ledger_dir)
            .field("public_key", &self.public_key)
            .finish_non_exhaustive()
    }
}

/// What [`Ledger::open`] repaired: the head file named `from_seq` but records
/// up to `to_seq` were committed (the writer stopped before it rewrote the
/// head, or the head file was rolled back). Records `from_seq+1..=to_seq` were
/// checked (chain, hashes, signatures) before the head was re-signed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct HeadRecovery {
    pub from_seq: u64,
    pub to_seq: u64,
}

struct AppendRequest {
    entry: Entry,
    params_text: String,
    params_sha256: Sha256Digest,
    reply: SyncSender<Result<Record, LedgerError>>,
}

struct HeadShared {
    state: Mutex<HeadState>,
    changed: Condvar,
}

struct HeadState {
    /// The last committed (seq, hash).
    committed: (u64, Sha256Digest),
    /// The seq the head file names.
    written: u64,
    /// The last head write's error, until a write succeeds.
    error: Option<String>,
    closing: bool,
}

impl HeadShared {
    fn lock(&self) -> MutexGuard<'_, HeadState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

impl Ledger {
    /// Opens the ledger in seam's home, creating what is missing: `keys/` and
    /// `ledger/` (0700), the signing key (0600), the database (0600, WAL) and
    /// the head (signed (0, zeros) for a new ledger).
    ///
    /// It takes the writer lock (waiting up to 2 s, then [`LedgerError::Busy`]),
    /// and checks the signed head against the database: if the head is behind
    /// (an unclean stop), the records after it are checked and the head is
    /// re-signed (see [`Ledger::head_recovery`]). It refuses
    /// ([`LedgerError::Tampered`]) a ledger whose head is missing, unsigned,
    /// beyond the last record or names another hash, or whose records after
    /// the head do not check out; and ([`LedgerError::KeyMissing`]) to make a
    /// new key for a ledger that has records. It does not verify records before
    /// the head (that is [`Ledger::verify`], O(records)).
    pub fn open(seam_home: &Path) -> Result<Ledger, LedgerError> {
        let paths = LedgerPaths::new(seam_home);
        ensure_private_dir(&paths.keys_dir)?;
        ensure_private_dir(&paths.ledger_dir)?;
        let lock = WriterLock::acquire(&paths.lock_file, LOCK_PATIENCE)?;
        create_private_file(&paths.db_file)?;
        narrow_mode(&paths.db_file, 0o600)?;
        for companion in paths.db_companions() {
            narrow_mode(&companion, 0o600)?;
        }
        let conn = store::open_writer(&paths.db_file)?;
        let tip = store::last_link(&conn, &paths.db_file)?;
        let key = match read_signing_key(&paths.key_file)? {
            Some(key) => key,
            None if tip.0 > 0 => {
                return Err(LedgerError::KeyMissing {
                    path: paths.key_file.clone(),
                    ledger_has_records: true,
                });
            }
            None => create_signing_key(&paths.key_file)?,
        };
        let recovery = reconcile_head(&conn, &paths, &key, tip)?;
        sync_dir(&paths.ledger_dir)?;

        let key = Arc::new(key);
        let public_key = key.public_key();
        let head = Arc::new(HeadShared {
            state: Mutex::new(HeadState {
                committed: tip,
                written: tip.0,
                error: None,
                closing: false,
            }),
            changed: Condvar::new(),
        });
        let (requests, inbox) = mpsc::channel();
        let writer = {
            let (key, head, db) = (key.clone(), head.clone(), paths.db_file.clone());
            std::thread::Builder::new()
                .name("seam-ledger-writer".into())
                .spawn(move || run_writer(conn, &key, &inbox, tip, &head, &db))
                .map_err(|e| LedgerError::Io {
                    action: "start the writer thread for",
                    path: paths.db_file.clone(),
                    source: e,
                })?
        };
        let head_writer = {
            let (head, path) = (head.clone(), paths.head_file.clone());
            std::thread::Builder::new()
                .name("seam-ledger-head".into())
                .spawn(move || run_head_writer(&head, &key, &path))
                .map_err(|e| LedgerError::Io {
                    action: "start the head thread for",
                    path: paths.head_file.clone(),
                    source: e,
                })?
        };
        Ok(Ledger {
            paths,
            public_key,
            requests: Some(requests),
            writer: Some(writer),
            head,
            head_writer: Some(head_writer),
            recovery,
            _lock: lock,
        })
    }

    /// Appends `entry` and returns its record once it is durable: its
    /// transaction has committed with `synchronous=FULL`, i.e. the WAL was
    /// fsynced. Appends from concurrent callers are committed together (group
    /// commit: one transaction and one fsync for all that were waiting); each
    /// caller blocks until its batch commits. The signed head is rewritten
    /// shortly after, asynchronously (see the crate doc).
    ///
    /// On error nothing of the caller's batch was recorded: the gate must not
    /// send the answer.
    pub fn append(&self, entry: Entry) -> Result<Record, LedgerError> {
        let params_text = canonical_json(&entry.params);
        let params_sha256 = Sha256Digest::of(params_text.as_bytes());
        let (reply, answer) = mpsc::sync_channel(1);
        let stopped = || LedgerError::WriterStopped {
            path: self.paths.db_file.clone(),
        };
        self.requests
            .as_ref()
            .ok_or_else(stopped)?
            .send(AppendRequest {
                entry,
                params_text,
                params_sha256,
                reply,
            })
            .map_err(|_| stopped())?;
        answer.recv().map_err(|_| stopped())?
    }

    /// The ledger's public key (what `seam ledger pubkey` prints).
    pub fn public_key(&self) -> LedgerPublicKey {
        self.public_key
    }

    pub fn paths(&self) -> &LedgerPaths {
        &self.paths
    }

    /// What `open` repaired, if anything: the gate should log it.
    pub fn head_recovery(&self) -> Option<HeadRecovery> {
        self.recovery
    }

    /// Waits until the head file covers every record committed so far, and
    /// returns an error if the last head write failed.
    pub fn sync_head(&self) -> Result<(), LedgerError> {
        let mut state = self.head.lock();
        let target = state.committed.0;
        loop {
            if let Some(message) = &state.error {
                return Err(LedgerError::HeadWriteFailed {
                    path: self.paths.head_file.clone(),
                    message: message.clone(),
                });
            }
            if state.written >= target {
                return Ok(());
            }
            state = self
                .head
                .changed
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
    }

    /// A read-only view of this ledger (its own connection).
    pub fn reader(&self) -> Result<LedgerReader, LedgerError> {
        LedgerReader::open_paths(self.paths.clone())
    }

    /// Verifies the whole ledger with its own public key, after waiting for
    /// the head to cover every commit so far.
    pub fn verify(&self) -> Result<VerifyReport, VerifyError> {
        self.sync_head()?;
        self.reader()?.verify(&self.public_key)
    }

    /// Stops the writer (after the appends already queued), writes the final
    /// head, releases the lock. Dropping the ledger does the same but cannot
    /// report a failed head write.
    pub fn close(mut self) -> Result<(), LedgerError> {
        self.shutdown()
    }

    fn shutdown(&mut self) -> Result<(), LedgerError> {
        drop(self.requests.take());
        if let Some(writer) = self.writer.take() {
            let _ = writer.join();
        }
        {
            let mut state = self.head.lock();
            state.closing = true;
            self.head.changed.notify_all();
        }
        if let Some(head_writer) = self.head_writer.take() {
            let _ = head_writer.join();
        }
        let state = self.head.lock();
        match &state.error {
            Some(message) => Err(LedgerError::HeadWriteFailed {
                path: self.paths.head_file.clone(),
                message: message.clone(),
            }),
            None => Ok(()),
        }
    }
}

impl Drop for Ledger {
    fn drop(&mut self) {
        let _ = self.shutdown();
    }
}

/// Brings the head file in line with the database at open (see [`Ledger::open`]).
fn reconcile_head(
    conn: &Connection,
    paths: &LedgerPaths,
    key: &LedgerSigningKey,
    tip: (u64, Sha256Digest),
) -> Result<Option<HeadRecovery>, LedgerError> {
    let db = &paths.db_file;
    let tampered = |e: VerifyError| match e {
        VerifyError::Failed(failure) => LedgerError::Tampered {
            path: db.clone(),
            failure: Box::new(failure),
        },
        VerifyError::Ledger(e) => e,
    };
    if tip.0 == 0 && read_head_file(&paths.head_file)? == HeadFileState::Missing {
        write_head_file(
            &paths.head_file,
            &SignedHead::sign(key, 0, Sha256Digest::ZERO),
        )?;
        return Ok(None);
    }
    let public = key.public_key();
    let head = read_signed_head(&paths.head_file, &public, tip.0 > 0).map_err(tampered)?;
    check_head_against_rows(conn, db, &head, tip.0).map_err(tampered)?;
    if head.seq == tip.0 {
        return Ok(None);
    }
    let mut checker = ChainChecker::after(&public, head.seq, head.hash);
    check_rows(conn, db, &mut checker, tip.0).map_err(tampered)?;
    write_head_file(&paths.head_file, &SignedHead::sign(key, tip.0, tip.1))?;
    Ok(Some(HeadRecovery {
        from_seq: head.seq,
        to_seq: tip.0,
    }))
}

/// The writer thread: takes every waiting request (up to [`MAX_BATCH`]),
/// commits them in one transaction, answers each, hands the new tip to the
/// head thread. Ends when every `Sender` is gone.
fn run_writer(
    mut conn: Connection,
    key: &LedgerSigningKey,
    inbox: &Receiver<AppendRequest>,
    mut tip: (u64, Sha256Digest),
    head: &HeadShared,
    db: &Path,
) {
    while let Ok(first) = inbox.recv() {
        let mut batch = vec![first];
        while batch.len() < MAX_BATCH {
            match inbox.try_recv() {
                Ok(request) => batch.push(request),
                Err(_) => break,
            }
        }
        let mut replies = Vec::with_capacity(batch.len());
        let mut prepared = Vec::with_capacity(batch.len());
        for request in batch {
            replies.push(request.reply);
            prepared.push((request.entry, request.params_text, request.params_sha256));
        }
        let head_error = head.lock().error.clone();
        if let Some(message) = head_error {
            for reply in replies {
                let _ = reply.send(Err(LedgerError::HeadWriteFailed {
                    path: db.with_file_name("head"),
                    message: message.clone(),
                }));
            }
            continue;
        }
        match commit_batch(&mut conn, key, tip, prepared) {
            Ok(records) => {
                if let Some(last) = records.last() {
                    tip = (last.seq, last.hash);
                }
                publish_tip(head, tip);
                for (reply, record) in replies.into_iter().zip(records) {
                    let _ = reply.send(Ok(record));
                }
            }
            Err(e) => {
                let message = e.to_string();
                for reply in replies {
                    let _ = reply.send(Err(LedgerError::AppendFailed {
                        path: db.to_owned(),
                        message: message.clone(),
                    }));
                }
                // The transaction rolled back; re-read the tip in case a
                // failed commit left it in place after all.
                match store::last_link(&conn, db) {
                    Ok(stored) if stored != tip => {
                        tip = stored;
                        publish_tip(head, tip);
                    }
                    _ => {}
                }
            }
        }
    }
}

fn commit_batch(
    conn: &mut Connection,
    key: &LedgerSigningKey,
    tip: (u64, Sha256Digest),
    prepared: Vec<(Entry, String, Sha256Digest)>,
) -> rusqlite::Result<Vec<Record>> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    let (mut seq, mut prev_hash) = tip;
    let mut records = Vec::with_capacity(prepared.len());
    for (entry, params_text, params_sha256) in prepared {
        seq += 1;
        let time = Timestamp::now();
        let hash = record_hash(&HashedFields {
            seq,
            time,
            entry: &entry,
            params_sha256: &params_sha256,
            prev_hash: &prev_hash,
        });
        let record = Record {
            seq,
            time,
            entry,
            params_sha256,
            prev_hash,
            hash,
            signature: key.sign(hash.as_bytes()),
        };
        store::insert(&tx, &record, &params_text)?;
        prev_hash = hash;
        records.push(record);
    }
    tx.commit()?;
    Ok(records)
}

fn publish_tip(head: &HeadShared, tip: (u64, Sha256Digest)) {
    let mut state = head.lock();
    state.committed = tip;
    head.changed.notify_all();
}

/// The head thread: whenever the committed tip moves past what the head file
/// says, signs the newest tip and replaces the file (coalescing: one write
/// covers every commit since the last). Writes the final head and ends when
/// the ledger closes.
fn run_head_writer(head: &HeadShared, key: &LedgerSigningKey, path: &Path) {
    let mut state = head.lock();
    loop {
        while state.committed.0 == state.written && !state.closing {
            state = head
                .changed
                .wait(state)
                .unwrap_or_else(|poisoned| poisoned.into_inner());
        }
        if state.committed.0 == state.written {
            return; // closing, and everything is covered
        }
        let (seq, hash) = state.committed;
        drop(state);
        let result = write_head_file(path, &SignedHead::sign(key, seq, hash));
        state = head.lock();
        match result {
            Ok(()) => {
                state.written = seq;
                state.error = None;
                head.changed.notify_all();
            }
            Err(e) => {
                state.error = Some(e.to_string());
                head.changed.notify_all();
                if state.closing {
                    return;
                }
                drop(state);
                std::thread::sleep(Duration::from_millis(50));
                state = head.lock();
            }
        }
    }
}
