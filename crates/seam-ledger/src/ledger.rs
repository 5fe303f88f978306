//! [`Ledger`]: the one writer, a pipeline of three threads. The sequencer
//! chains and signs batches; the head thread makes the head's ceiling cover
//! them (and seals the head once commits are durable and appends are quiet);
//! the committer inserts a batch, waits until its ceiling is durable, and
//! commits (group commit).

use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{self, Receiver, Sender, SyncSender};
use std::sync::{Arc, Condvar, Mutex, MutexGuard};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rusqlite::{Connection, TransactionBehavior};

use crate::digest::{Sha256Digest, canonical_json};
use crate::error::LedgerError;
use crate::head::{ChainLink, HeadFileState, HeadWriter, SignedHead, read_head_file};
use crate::keys::{LedgerPublicKey, LedgerSigningKey, create_signing_key, read_signing_key};
use crate::paths::LedgerPaths;
use crate::reader::LedgerReader;
use crate::record::{Entry, HashedFields, Record, record_hash};
use crate::store;
use crate::time::Timestamp;
use crate::verify::{
    ChainChecker, VerifyError, VerifyReport, check_head_position, check_rows, read_signed_head,
};
use seam_home::file::{
    Lock, OWNER_ONLY, create_private_file, ensure_private_dir, narrow_mode, sync_dir,
};

/// Most appends committed in one transaction.
const MAX_BATCH: usize = 512;
/// How long [`Ledger::open`] waits for the writer lock before it answers
/// `Busy`: a one-shot `seam invoke` holds it for milliseconds.
pub const DEFAULT_LOCK_WAIT: Duration = Duration::from_secs(5);
/// How long appends must have been quiet before the head thread seals. A
/// seal holds the head file for one `fdatasync`, which an append arriving
/// meanwhile waits for before its own ceiling write; while appends flow, each
/// ceiling write carries the floor forward anyway. Long enough that a caller
/// appending in a loop with a short pause between calls never meets a seal,
/// short against the time a lone last batch stays unsealed.
const SEAL_DELAY: Duration = Duration::from_millis(20);
/// How long the head thread waits before it tries a failed head write again.
const SEAL_RETRY: Duration = Duration::from_millis(50);

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
    /// The writer lock: an exclusive `flock` on `<ledger>/lock`, held as long as this
    /// ledger lives. Only one `Ledger` (in any process) appends at a time.
    _lock: Lock,
}

impl std::fmt::Debug for Ledger {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Ledger")
            .field("ledger_dir", &self.paths.ledger_dir)
            .field("public_key", &self.public_key)
            .finish_non_exhaustive()
    }
}

/// What [`Ledger::open`] sealed: the head's floor was `from_seq` but records
/// up to `to_seq` (within its ceiling) were committed: the writer stopped
/// uncleanly before it sealed them. Records `from_seq+1..=to_seq` were
/// checked (chain, hashes, signatures) before the head was sealed at `to_seq`.
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

/// What the writer threads know about the head file. Only the head thread
/// writes the file; the others ask it for ceilings and wait for them here.
struct HeadShared {
    path: PathBuf,
    state: Mutex<HeadState>,
    changed: Condvar,
}

struct HeadState {
    /// The last committed record.
    committed: ChainLink,
    /// The newest durable slot.
    durable: SignedHead,
    /// The ceiling the sequencer asked for last: the end of its newest batch.
    wanted: ChainLink,
    /// Batches announced by the sequencer that the committer has not finished
    /// (committed or failed).
    in_flight: u64,
    /// Counts batches announced, so the head thread can tell whether appends
    /// were quiet.
    announced: u64,
    /// Counts failed head writes: a committer waiting for a ceiling gives up
    /// when a write after it began waiting fails.
    failures: u64,
    /// `sync_head` wants a seal without the quiet delay.
    seal_now: bool,
    /// The last head write's error, until a head write succeeds.
    error: Option<String>,
    closing: bool,
}

impl HeadShared {
    fn lock(&self) -> MutexGuard<'_, HeadState> {
        self.state
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }

    fn wait<'a>(&self, state: MutexGuard<'a, HeadState>) -> MutexGuard<'a, HeadState> {
        self.changed
            .wait(state)
            .unwrap_or_else(|poisoned| poisoned.into_inner())
    }
}

/// Whether a durable ceiling covers `end`, the last record of a batch: it is
/// that record, or beyond it. (A ceiling beyond `end` with another chain's
/// records is one a failed batch left; a crash after committing `end` leaves
/// the ledger below it, which verifies.)
fn covers(ceiling: ChainLink, end: ChainLink) -> bool {
    ceiling == end || ceiling.seq > end.seq
}

impl Ledger {
    /// Opens the ledger in seam's home, creating what is missing: `keys/` and
    /// `ledger/` (0700), the signing key (0600), the database (0600, WAL) and
    /// the head file (0600; floor and ceiling at (0, zeros) for a new ledger).
    ///
    /// It takes the writer lock (waiting up to [`DEFAULT_LOCK_WAIT`], then
    /// [`LedgerError::Busy`]) and checks the signed head against the
    /// database. After an unclean stop the last records may lie between the
    /// head's floor and its ceiling: they are checked and the head is sealed
    /// at the last one (see [`Ledger::head_recovery`]). It refuses
    /// ([`LedgerError::Tampered`]) a ledger whose head is missing, unsigned,
    /// has its floor beyond the last record, names another hash, or has
    /// records beyond its ceiling (rolled back), or whose records after the
    /// floor do not check out; and ([`LedgerError::KeyMissing`]) to make a
    /// new key for a ledger that has records. It does not verify records
    /// before the floor (that is [`Ledger::verify`], O(records)).
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
        // Waits up to `lock_wait` for a holder that is about to let go (a `verify` that
        // checks liveness holds it for microseconds).
        let lock = Lock::exclusive_within(&paths.lock_file, lock_wait)?.ok_or_else(|| {
            LedgerError::Busy {
                path: paths.lock_file.clone(),
            }
        })?;
        create_private_file(&paths.db_file)?;
        narrow_mode(&paths.db_file, OWNER_ONLY)?;
        for companion in paths.db_companions() {
            narrow_mode(&companion, OWNER_ONLY)?;
        }
        narrow_mode(&paths.head_file, OWNER_ONLY)?;
        let conn = store::open_writer(&paths.db_file)?;
        let tip = store::last_link(&conn, &paths.db_file)?;
        let key = match read_signing_key(&paths.key_file)? {
            Some(key) => key,
            None if tip.seq > 0 => {
                return Err(LedgerError::KeyMissing {
                    path: paths.key_file.clone(),
                    ledger_has_records: true,
                });
            }
            None => create_signing_key(&paths.key_file)?,
        };
        let (head_writer, recovery) = reconcile_head(&conn, &paths, &key, tip)?;
        sync_dir(&paths.ledger_dir)?;

        let key = Arc::new(key);
        let public_key = key.public_key();
        let durable = head_writer.durable();
        let head = Arc::new(HeadShared {
            state: Mutex::new(HeadState {
                committed: tip,
                durable,
                wanted: durable.ceiling,
                in_flight: 0,
                announced: 0,
                failures: 0,
                seal_now: false,
                error: None,
                closing: false,
            }),
            path: paths.head_file.clone(),
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
            cause: e,
        };
        let sequencer = {
            let (key, writer, head) = (key.clone(), writer.clone(), head.clone());
            std::thread::Builder::new()
                .name("seam-ledger-seq".into())
                .spawn(move || run_sequencer(&key, &inbox, &to_committer, &writer, &head))
                .map_err(spawn_failed)?
        };
        let committer = {
            let (writer, head, db) = (writer.clone(), head.clone(), paths.db_file.clone());
            std::thread::Builder::new()
                .name("seam-ledger-commit".into())
                .spawn(move || run_committer(conn, &signed, &writer, &head, &db, tip))
                .map_err(spawn_failed)?
        };
        let head_thread = {
            let head = head.clone();
            std::thread::Builder::new()
                .name("seam-ledger-head".into())
                .spawn(move || run_head_writer(head_writer, &head, &key))
                .map_err(|e| LedgerError::Io {
                    action: "start the head thread for",
                    path: paths.head_file.clone(),
                    cause: e,
                })?
        };
        Ok(Ledger {
            paths,
            public_key,
            requests: Some(requests),
            threads: vec![sequencer, committer],
            writer,
            head,
            head_writer: Some(head_thread),
            recovery,
            _lock: lock,
        })
    }

    /// Appends `entry` and returns its record once it is durable: the head
    /// file's ceiling covering it was `fdatasync`ed, then its transaction
    /// committed with `synchronous=FULL` (the WAL fsynced). Appends from
    /// concurrent callers are committed together (group commit: one head
    /// write and one transaction for all that were waiting); each caller
    /// blocks until its transaction commits. The head is sealed at the new
    /// record shortly after, asynchronously (see the crate doc).
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

    /// What `open` sealed after an unclean stop, if anything: the gate
    /// should log it.
    pub fn head_recovery(&self) -> Option<HeadRecovery> {
        self.recovery
    }

    /// Waits until the head file seals every record committed so far (its
    /// floor reaches the last commit), and returns an error if the last head
    /// write failed.
    pub fn sync_head(&self) -> Result<(), LedgerError> {
        let mut state = self.head.lock();
        let target = state.committed.seq;
        loop {
            if state.durable.floor.seq >= target {
                return Ok(());
            }
            if let Some(message) = &state.error {
                return Err(LedgerError::HeadWriteFailed {
                    path: self.paths.head_file.clone(),
                    message: message.clone(),
                });
            }
            if !state.seal_now {
                state.seal_now = true;
                self.head.changed.notify_all();
            }
            state = self.head.wait(state);
        }
    }

    /// A read-only view of this ledger (its own connection).
    pub fn reader(&self) -> Result<LedgerReader, LedgerError> {
        LedgerReader::open_paths(self.paths.clone())
    }

    /// Verifies the whole ledger with its own public key, after waiting for
    /// the head to seal every commit so far.
    pub fn verify(&self) -> Result<VerifyReport, VerifyError> {
        self.sync_head()?;
        self.reader()?.verify(&self.public_key)
    }

    /// Stops the writer (after the appends already queued), seals the head,
    /// releases the lock. Dropping the ledger does the same but cannot
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

/// Brings the head file in line with the database at open (see
/// [`Ledger::open`]) and returns its writer.
fn reconcile_head(
    conn: &Connection,
    paths: &LedgerPaths,
    key: &LedgerSigningKey,
    tip: ChainLink,
) -> Result<(HeadWriter, Option<HeadRecovery>), LedgerError> {
    let db = &paths.db_file;
    let tampered = |e: VerifyError| match e {
        VerifyError::Failed(failure) => LedgerError::Tampered {
            path: db.clone(),
            failure: Box::new(failure),
        },
        VerifyError::Ledger(e) => e,
        // Only `verify_against` holds a ledger to an anchor; opening never does.
        VerifyError::Anchor(e) => unreachable!("opening a ledger met an anchor: {e}"),
    };
    if tip.seq == 0 && read_head_file(&paths.head_file)? == HeadFileState::Missing {
        return Ok((HeadWriter::create(&paths.head_file, key)?, None));
    }
    let public = key.public_key();
    let current = read_signed_head(&paths.head_file, &public, tip.seq > 0).map_err(tampered)?;
    let head = current.head;
    check_head_position(conn, db, &head, tip).map_err(tampered)?;
    let mut writer = HeadWriter::open(&paths.head_file, current)?;
    if head.floor == tip && head.ceiling == tip {
        return Ok((writer, None));
    }
    // Records after the floor (an unclean stop), or a ceiling left above
    // the last record by a batch that never committed: check, then seal.
    let mut checker = ChainChecker::after(&public, head.floor.seq, head.floor.hash);
    check_rows(conn, db, &mut checker, tip.seq).map_err(tampered)?;
    writer.write(key, tip, tip)?;
    let recovery = (tip.seq > head.floor.seq).then_some(HeadRecovery {
        from_seq: head.floor.seq,
        to_seq: tip.seq,
    });
    Ok((writer, recovery))
}

/// The sequencer's restart point. The committer moves it on after a failed
/// commit: the sequencer had already chained later batches onto records that
/// never reached the disk, so those are failed and the chain resumes from
/// what is committed.
struct Chain {
    epoch: u64,
    tip: ChainLink,
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

/// One sequencer batch: records chained onto the tip of `epoch`, ending at
/// `end`.
struct SignedBatch {
    epoch: u64,
    end: ChainLink,
    appends: Vec<SignedAppend>,
}

/// The sequencer thread: takes every waiting request (up to [`MAX_BATCH`]),
/// gives each the next seq, hashes and signs it onto the chain, asks the head
/// thread for a ceiling at the batch's end, and passes the batch to the
/// committer. It runs ahead of the disk: the next batch is signed while the
/// head write and the commit of the last are in flight. Ends when every
/// `Sender` of `inbox` is gone.
fn run_sequencer(
    key: &LedgerSigningKey,
    inbox: &Receiver<AppendRequest>,
    committer: &Sender<SignedBatch>,
    shared: &WriterShared,
    head: &HeadShared,
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
            let (seq, prev_hash) = (tip.seq + 1, tip.hash);
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
            tip = ChainLink::new(seq, hash);
        }
        // Ask the head thread for a ceiling at the batch's end; the
        // committer waits for it before it commits.
        {
            let mut state = head.lock();
            state.wanted = tip;
            state.in_flight += 1;
            state.announced += 1;
            head.changed.notify_all();
        }
        if committer
            .send(SignedBatch {
                epoch,
                end: tip,
                appends,
            })
            .is_err()
        {
            return;
        }
    }
}

/// The committer thread: takes every signed batch waiting, inserts them in
/// one `BEGIN IMMEDIATE` transaction while the head thread writes their
/// ceiling, commits (the fsync) once the ceiling is durable, publishes the
/// new last commit, and answers each caller. Ends when the sequencer is gone.
fn run_committer(
    mut conn: Connection,
    batches: &Receiver<SignedBatch>,
    shared: &WriterShared,
    head: &HeadShared,
    db: &Path,
    mut committed: ChainLink,
) {
    while let Ok(first) = batches.recv() {
        let mut waiting = vec![first];
        while let Ok(batch) = batches.try_recv() {
            waiting.push(batch);
        }
        let taken = waiting.len() as u64;
        let epoch = shared.chain().epoch;
        // Batches of an older epoch were chained onto records that failed.
        let mut appends = Vec::new();
        let mut end = committed;
        for batch in waiting {
            if batch.epoch == epoch {
                appends.extend(batch.appends);
                end = batch.end;
            } else {
                fail_all(batch.appends, || LedgerError::AppendFailed {
                    path: db.to_owned(),
                    message: "an earlier batch failed to commit, and this one was chained onto it"
                        .to_owned(),
                });
            }
        }
        let Some(first_append) = appends.first() else {
            publish_commit(head, committed, taken);
            continue;
        };
        let outcome = if first_append.record.prev_hash != committed.hash
            || first_append.record.seq != committed.seq + 1
        {
            Err(CommitFailure::Sqlite(format!(
                "internal: batch starts at seq {} but the ledger ends at {}",
                first_append.record.seq, committed.seq
            )))
        } else {
            insert_and_commit(&mut conn, &appends, || wait_for_ceiling(head, end))
        };
        match outcome {
            Ok(()) => {
                committed = end;
                shared.commits.fetch_add(1, Ordering::Relaxed);
                shared
                    .records
                    .fetch_add(appends.len() as u64, Ordering::Relaxed);
                publish_commit(head, committed, taken);
                for append in appends {
                    let _ = append.reply.send(Ok(append.record));
                }
            }
            Err(failure) => {
                match &failure {
                    CommitFailure::Sqlite(message) => {
                        fail_all(appends, || LedgerError::AppendFailed {
                            path: db.to_owned(),
                            message: message.clone(),
                        })
                    }
                    CommitFailure::Head(message) => {
                        fail_all(appends, || LedgerError::HeadWriteFailed {
                            path: head.path.clone(),
                            message: message.clone(),
                        })
                    }
                }
                // The transaction rolled back; re-read the tip in case a
                // failed commit reached the disk after all (it was only
                // committed under a durable ceiling, so the head covers it).
                if let Ok(stored) = store::last_link(&conn, db) {
                    committed = stored;
                }
                {
                    let mut chain = shared.chain();
                    chain.epoch += 1;
                    chain.tip = committed;
                }
                publish_commit(head, committed, taken);
            }
        }
    }
}

/// Why a batch was not committed.
enum CommitFailure {
    /// SQLite refused (the transaction rolled back).
    Sqlite(String),
    /// The ceiling covering the batch could not be written: it was not committed.
    Head(String),
}

/// Waits until a durable head's ceiling covers `end`, or a head write fails
/// meanwhile.
fn wait_for_ceiling(head: &HeadShared, end: ChainLink) -> Result<(), String> {
    let mut state = head.lock();
    let failures = state.failures;
    loop {
        if covers(state.durable.ceiling, end) {
            return Ok(());
        }
        if state.failures != failures {
            return Err(state.error.clone().unwrap_or_default());
        }
        state = head.wait(state);
    }
}

fn fail_all(appends: Vec<SignedAppend>, error: impl Fn() -> LedgerError) {
    for append in appends {
        let _ = append.reply.send(Err(error()));
    }
}

/// Inserts `appends` in one transaction, then commits it if and only if
/// `ceiling_durable` says the head covers them (else it rolls back).
fn insert_and_commit(
    conn: &mut Connection,
    appends: &[SignedAppend],
    ceiling_durable: impl FnOnce() -> Result<(), String>,
) -> Result<(), CommitFailure> {
    let sqlite = |e: rusqlite::Error| CommitFailure::Sqlite(e.to_string());
    let tx = conn
        .transaction_with_behavior(TransactionBehavior::Immediate)
        .map_err(sqlite)?;
    for append in appends {
        store::insert(&tx, &append.record, &append.params_text).map_err(sqlite)?;
    }
    ceiling_durable().map_err(CommitFailure::Head)?;
    tx.commit().map_err(sqlite)
}

/// The committer finished `batches` batches; `committed` is the last commit.
fn publish_commit(head: &HeadShared, committed: ChainLink, batches: u64) {
    let mut state = head.lock();
    state.committed = committed;
    state.in_flight -= batches;
    head.changed.notify_all();
}

/// The head thread, the one writer of the head file. In turn:
///
/// - when the sequencer wants a ceiling the durable head does not cover,
///   writes {floor: last commit, ceiling: the newest wanted} (one write covers
///   every batch announced meanwhile);
/// - otherwise, when the head is not sealed at the last commit, nothing is
///   in flight and appends have been quiet for [`SEAL_DELAY`] (or a seal is
///   asked for), seals: {floor: last commit, ceiling: the same, or the durable
///   ceiling if that is beyond (a failed batch's; lowering it while running
///   could race a commit)};
/// - at close, after the committer has stopped, writes the final seal with
///   the ceiling at the last commit, and ends.
fn run_head_writer(mut writer: HeadWriter, head: &HeadShared, key: &LedgerSigningKey) {
    let mut state = head.lock();
    loop {
        let durable = state.durable;
        let (floor, ceiling) = if !state.closing && !covers(durable.ceiling, state.wanted) {
            (state.committed, state.wanted)
        } else {
            let committed = state.committed;
            let ceiling = if !state.closing && durable.ceiling.seq > committed.seq {
                durable.ceiling
            } else {
                committed
            };
            let sealed = durable.floor == committed && durable.ceiling == ceiling;
            if sealed || (state.in_flight > 0 && !state.closing) {
                if state.closing {
                    return;
                }
                state = head.wait(state);
                continue;
            }
            if !state.closing && !state.seal_now {
                let seen = state.announced;
                let deadline = Instant::now() + SEAL_DELAY;
                while state.announced == seen && !state.closing && !state.seal_now {
                    let left = deadline.saturating_duration_since(Instant::now());
                    if left.is_zero() {
                        break;
                    }
                    state = head
                        .changed
                        .wait_timeout(state, left)
                        .unwrap_or_else(|poisoned| poisoned.into_inner())
                        .0;
                }
                if state.announced != seen || state.closing || state.seal_now {
                    continue;
                }
            }
            (committed, ceiling)
        };
        drop(state);
        let result = writer.write(key, floor, ceiling);
        state = head.lock();
        match result {
            Ok(written) => {
                state.durable = written;
                state.error = None;
                if written.floor == state.committed {
                    state.seal_now = false;
                }
                head.changed.notify_all();
            }
            Err(e) => {
                state.error = Some(e.to_string());
                state.failures += 1;
                head.changed.notify_all();
                if state.closing {
                    return;
                }
                drop(state);
                std::thread::sleep(SEAL_RETRY);
                state = head.lock();
            }
        }
    }
}
