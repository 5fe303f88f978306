//! [`Ledger`]: the one writer. Group commit by a sequencer and a committer thread; the signed head
//! rewritten by a third thread after commits.

use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
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
/// How long [`Ledger::open`] waits for the writer lock before it answers
/// `Busy`: a one-shot `seam invoke` holds it for milliseconds.
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(5);

/// The ledger, open for appending. One per seam home at a time (an exclusive
/// lock enforces it). `Send + Sync`: share it behind an `Arc`; every thread
/// may call [`Ledger::append`] at once.
pub struct Ledger {
    paths: LedgerPaths,
    public_key: LedgerPublicKey,
    requests: Option<Sender<AppendRequest>>,
    /// The sequencer and the committer, joined in that order on close.
    threads: Vec<JoinHandle<()>>,
    writer: Arc<WriterShared>,
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

/// See [`Ledger::stats`].
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct LedgerStats {
    pub records: u64,
    pub commits: u64,
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
    /// It takes the writer lock (waiting up to [`DEFAULT_LOCK_WAIT`], then
    /// [`LedgerError::Busy`]),
    /// and checks the signed head against the database: if the head is behind
    /// (an unclean stop), the records after it are checked and the head is
    /// re-signed (see [`Ledger::head_recovery`]). It refuses
    /// ([`LedgerError::Tampered`]) a ledger whose head is missing, unsigned,
    /// beyond the last record or names another hash, or whose records after
    /// the head do not check out; and ([`LedgerError::KeyMissing`]) to make a
    /// new key for a ledger that has records. It does not verify records before
    /// the head (that is [`Ledger::verify`], O(records)).
    pub fn open(seam_home: &Path) -> Result<Ledger, LedgerError> {
        Ledger::open_with_lock_wait(seam_home, DEFAULT_LOCK_WAIT)
    }

    /// [`Ledger::open`], waiting up to `lock_wait` for another writer to let go.
    pub fn open_with_lock_wait(
        seam_home: &Path,
        lock_wait: Duration,
    ) -> Result<Ledger, LedgerError> {
        let paths = LedgerPaths::new(seam_home);
        ensure_private_dir(&paths.keys_dir)?;
        ensure_private_dir(&paths.ledger_dir)?;
        let lock = WriterLock::acquire(&paths.lock_file, lock_wait)?;
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
        let writer = Arc::new(WriterShared {
            chain: Mutex::new(Chain { epoch: 0, tip }),
            commits: AtomicU64::new(0),
            records: AtomicU64::new(0),
        });
        let (requests, inbox) = mpsc::channel();
        let (to_committer, signed) = mpsc::channel();
        let spawn_failed = |e| LedgerError::Io {
            action: "start a writer thread for",
            path: paths.db_file.clone(),
            source: e,
        };
        let sequencer = {
            let (key, writer) = (key.clone(), writer.clone());
            std::thread::Builder::new()
                .name("seam-ledger-seq".into())
                .spawn(move || run_sequencer(&key, &inbox, &to_committer, &writer))
                .map_err(spawn_failed)?
        };
        let committer = {
            let (writer, head, db) = (writer.clone(), head.clone(), paths.db_file.clone());
            std::thread::Builder::new()
                .name("seam-ledger-commit".into())
                .spawn(move || run_committer(conn, &signed, &writer, &head, &db, tip))
                .map_err(spawn_failed)?
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
            threads: vec![sequencer, committer],
            writer,
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
    /// caller blocks until its transaction commits. The signed head is
    /// rewritten shortly after, asynchronously (see the crate doc).
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

    /// Counts since `open`: records appended and transactions committed
    /// (records / commits is the group commit's mean batch).
    pub fn stats(&self) -> LedgerStats {
        LedgerStats {
            records: self.writer.records.load(Ordering::Relaxed),
            commits: self.writer.commits.load(Ordering::Relaxed),
        }
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
        for thread in self.threads.drain(..) {
            let _ = thread.join();
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

/// The sequencer's restart point. The committer moves it on after a failed
/// commit: the sequencer had already chained later batches onto records that
/// never reached the disk, so those are failed and the chain resumes from
/// what is committed.
struct Chain {
    epoch: u64,
    tip: (u64, Sha256Digest),
}

/// What the two writer threads share besides their channel.
struct WriterShared {
    chain: Mutex<Chain>,
    commits: AtomicU64,
    records: AtomicU64,
}

impl WriterShared {
    fn chain(&self) -> MutexGuard<'_, Chain> {
        self.chain
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// A record hashed and signed, waiting to be committed, and who waits for it.
struct SignedAppend {
    record: Record,
    params_text: String,
    reply: SyncSender<Result<Record, LedgerError>>,
}

/// One sequencer batch: records chained onto the tip of `epoch`.
struct SignedBatch {
    epoch: u64,
    appends: Vec<SignedAppend>,
}

/// The sequencer thread: takes every waiting request (up to [`MAX_BATCH`]),
/// gives each the next seq, hashes and signs it onto the chain, and passes
/// the batch to the committer. It runs ahead of the commit, so signing the
/// next batch overlaps the fsync of the last. Ends when every `Sender` of
/// `inbox` is gone.
fn run_sequencer(
    key: &LedgerSigningKey,
    inbox: &Receiver<AppendRequest>,
    committer: &Sender<SignedBatch>,
    shared: &WriterShared,
) {
    let (mut epoch, mut tip) = {
        let chain = shared.chain();
        (chain.epoch, chain.tip)
    };
    while let Ok(first) = inbox.recv() {
        let mut requests = vec![first];
        while requests.len() < MAX_BATCH {
            match inbox.try_recv() {
                Ok(request) => requests.push(request),
                Err(_) => break,
            }
        }
        {
            let chain = shared.chain();
            if chain.epoch != epoch {
                (epoch, tip) = (chain.epoch, chain.tip);
            }
        }
        let mut appends = Vec::with_capacity(requests.len());
        for request in requests {
            let (seq, prev_hash) = (tip.0 + 1, tip.1);
            let time = Timestamp::now();
            let hash = record_hash(&HashedFields {
                seq,
                time,
                entry: &request.entry,
                params_sha256: &request.params_sha256,
                prev_hash: &prev_hash,
            });
            appends.push(SignedAppend {
                record: Record {
                    seq,
                    time,
                    entry: request.entry,
                    params_sha256: request.params_sha256,
                    prev_hash,
                    hash,
                    signature: key.sign(hash.as_bytes()),
                },
                params_text: request.params_text,
                reply: request.reply,
            });
            tip = (seq, hash);
        }
        if committer.send(SignedBatch { epoch, appends }).is_err() {
            return;
        }
    }
}

/// The committer thread: takes every signed batch waiting, inserts them in
/// one `BEGIN IMMEDIATE` transaction and commits (the fsync), answers each
/// caller, and hands the new tip to the head thread. Ends when the sequencer
/// is gone.
fn run_committer(
    mut conn: Connection,
    batches: &Receiver<SignedBatch>,
    shared: &WriterShared,
    head: &HeadShared,
    db: &Path,
    mut committed: (u64, Sha256Digest),
) {
    while let Ok(first) = batches.recv() {
        let mut waiting = vec![first];
        while let Ok(batch) = batches.try_recv() {
            waiting.push(batch);
        }
        let epoch = shared.chain().epoch;
        // Batches of an older epoch were chained onto records that failed.
        let mut appends = Vec::new();
        for batch in waiting {
            if batch.epoch == epoch {
                appends.extend(batch.appends);
            } else {
                fail_all(batch.appends, || LedgerError::AppendFailed {
                    path: db.to_owned(),
                    message: "an earlier batch failed to commit, and this one was chained onto it"
                        .to_owned(),
                });
            }
        }
        let Some(first_append) = appends.first() else {
            continue;
        };
        let head_error = head.lock().error.clone();
        let outcome = if let Some(message) = head_error {
            Err(LedgerError::HeadWriteFailed {
                path: db.with_file_name("head"),
                message,
            })
        } else if first_append.record.prev_hash != committed.1
            || first_append.record.seq != committed.0 + 1
        {
            Err(LedgerError::AppendFailed {
                path: db.to_owned(),
                message: format!(
                    "internal: batch starts at seq {} but the ledger ends at {}",
                    first_append.record.seq, committed.0
                ),
            })
        } else {
            insert_and_commit(&mut conn, &appends).map_err(|e| LedgerError::AppendFailed {
                path: db.to_owned(),
                message: e.to_string(),
            })
        };
        match outcome {
            Ok(()) => {
                if let Some(last) = appends.last() {
                    committed = (last.record.seq, last.record.hash);
                }
                shared.commits.fetch_add(1, Ordering::Relaxed);
                shared
                    .records
                    .fetch_add(appends.len() as u64, Ordering::Relaxed);
                publish_tip(head, committed);
                for append in appends {
                    let _ = append.reply.send(Ok(append.record));
                }
            }
            Err(error) => {
                let message = error.to_string();
                fail_all(appends, || match &error {
                    LedgerError::HeadWriteFailed { path, .. } => LedgerError::HeadWriteFailed {
                        path: path.clone(),
                        message: message.clone(),
                    },
                    _ => LedgerError::AppendFailed {
                        path: db.to_owned(),
                        message: message.clone(),
                    },
                });
                // The transaction rolled back; re-read the tip in case a
                // failed commit reached the disk after all.
                if let Ok(stored) = store::last_link(&conn, db)
                    && stored != committed
                {
                    committed = stored;
                    publish_tip(head, committed);
                }
                let mut chain = shared.chain();
                chain.epoch += 1;
                chain.tip = committed;
            }
        }
    }
}

fn fail_all(appends: Vec<SignedAppend>, error: impl Fn() -> LedgerError) {
    for append in appends {
        let _ = append.reply.send(Err(error()));
    }
}

fn insert_and_commit(conn: &mut Connection, appends: &[SignedAppend]) -> rusqlite::Result<()> {
    let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
    for append in appends {
        store::insert(&tx, &append.record, &append.params_text)?;
    }
    tx.commit()
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
