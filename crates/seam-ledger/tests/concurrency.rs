//! Many threads append at once: every append gets its own seq, seqs are
//! contiguous, and the ledger verifies, also while appends are running.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use common::entry;
use seam_ledger::{Ledger, LedgerReader, verify};

const THREADS: usize = 16;
const PER_THREAD: usize = 150;

#[test]
fn concurrent_appends_get_contiguous_seqs_and_verify() {
    let home = tempfile::tempdir().unwrap();
    let ledger = Arc::new(Ledger::open(home.path()).unwrap());
    let handles: Vec<_> = (0..THREADS)
        .map(|t| {
            let ledger = ledger.clone();
            std::thread::spawn(move || {
                (0..PER_THREAD)
                    .map(|i| {
                        let r = ledger.append(entry(t * PER_THREAD + i)).unwrap();
                        (r.seq, r.entry.invocation_id)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut by_seq = BTreeMap::new();
    for handle in handles {
        for (seq, id) in handle.join().unwrap() {
            assert!(
                by_seq.insert(seq, id).is_none(),
                "seq {seq} handed out twice"
            );
        }
    }
    let total = (THREADS * PER_THREAD) as u64;
    assert_eq!(
        by_seq.keys().copied().collect::<Vec<_>>(),
        (1..=total).collect::<Vec<_>>()
    );
    ledger.sync_head().unwrap();
    let stats = ledger.stats();
    assert_eq!(stats.records, total);
    assert!(stats.commits < stats.records, "no group commit: {stats:?}");
    // The seq each caller was told is where its invocation is stored.
    common::assert_stored_where_told(&ledger, &by_seq);
    Arc::into_inner(ledger).unwrap().close().unwrap();
    assert_eq!(verify(home.path(), None).unwrap().records, total);
}

#[test]
fn verify_passes_while_a_writer_appends() {
    let home = tempfile::tempdir().unwrap();
    let ledger = Arc::new(Ledger::open(home.path()).unwrap());
    let key = ledger.public_key();
    for i in 0..50 {
        ledger.append(entry(i)).unwrap();
    }
    let running = Arc::new(AtomicUsize::new(4));
    let writers: Vec<_> = (0..4)
        .map(|t| {
            let (ledger, running) = (ledger.clone(), running.clone());
            std::thread::spawn(move || {
                for i in 0..150 {
                    ledger.append(entry(1000 * (t + 1) + i)).unwrap();
                }
                running.fetch_sub(1, Ordering::SeqCst);
            })
        })
        .collect();
    let reader = LedgerReader::open(home.path()).unwrap();
    let mut verified_while_live = 0;
    let mut last = 0;
    while running.load(Ordering::SeqCst) > 0 {
        let report = reader.verify(&key).expect("a live ledger verifies");
        assert!(report.records >= last);
        assert!(report.writer_live);
        // Records committed a moment ago may be after the sealed floor, never
        // beyond the ceiling.
        assert_eq!(report.head.seq + report.unsealed, report.records);
        assert!(report.records <= report.signed_head.ceiling.seq);
        last = report.records;
        verified_while_live += 1;
    }
    for w in writers {
        w.join().unwrap();
    }
    assert!(verified_while_live > 0);
    let report = ledger.verify().unwrap();
    assert_eq!(report.records, 50 + 4 * 150);
    // `Ledger::verify` waits for the seal.
    assert_eq!(report.head.seq, report.records);
}

#[test]
fn ledger_is_send_and_sync() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Ledger>();
}
