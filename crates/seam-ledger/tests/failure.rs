//! A commit that fails must fail exactly the appends it carried (and those
//! chained onto them), and the chain must continue from what is on disk.

mod common;

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use common::{attacker_db, entry};
use seam_ledger::{Ledger, LedgerError};

const BLOCK: &str = "CREATE TRIGGER block BEFORE INSERT ON records \
                     BEGIN SELECT RAISE(ABORT, 'disk on fire'); END;";

#[test]
fn a_failed_commit_fails_its_append_and_the_chain_resumes() {
    let home = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(home.path()).unwrap();
    let records: Vec<_> = (1..=3).map(|i| ledger.append(entry(i)).unwrap()).collect();
    let third = &records[2];
    let db = attacker_db(home.path());
    db.execute_batch(BLOCK).unwrap();
    match ledger.append(entry(4)) {
        Err(LedgerError::AppendFailed { message, .. }) => {
            assert!(message.contains("disk on fire"), "{message}")
        }
        other => panic!("an append whose commit failed returned {other:?}"),
    }
    db.execute_batch("DROP TRIGGER block;").unwrap();
    let next = ledger.append(entry(5)).unwrap();
    assert_eq!((next.seq, next.prev_hash), (4, third.hash));
    assert_eq!(next.entry.invocation_id, "inv-5");
    assert_eq!(ledger.verify().unwrap().records, 4);
}

#[test]
fn failures_under_concurrency_leave_a_contiguous_verified_chain() {
    let home = tempfile::tempdir().unwrap();
    let ledger = Arc::new(Ledger::open(home.path()).unwrap());
    let db = attacker_db(home.path());
    // Retry the writer's lock often: it is free only between its commits.
    fn eager(tries: i32) -> bool {
        std::thread::sleep(Duration::from_micros(100));
        tries < 200_000
    }
    db.busy_handler(Some(eager)).unwrap();
    let failures_seen = Arc::new(AtomicUsize::new(0));
    let stop = Arc::new(AtomicBool::new(false));
    let workers: Vec<_> = (0..8)
        .map(|t| {
            let (ledger, failures_seen, stop) =
                (ledger.clone(), failures_seen.clone(), stop.clone());
            std::thread::spawn(move || {
                // Appends keep coming until the attacker is done (bounded).
                (0..3000)
                    .take_while(|_| !stop.load(Ordering::SeqCst))
                    .map(|i| {
                        let id = 10_000 * t + i;
                        let result = ledger.append(entry(id)).map(|r| r.seq);
                        if result.is_err() {
                            failures_seen.fetch_add(1, Ordering::SeqCst);
                        }
                        (id, result)
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    // Block commits for a while, a few times, and until one was blocked (the
    // attacker waits for the writer's lock, so how soon it gets in depends on
    // the machine's load).
    let mut cycles = 0;
    let deadline = std::time::Instant::now() + Duration::from_secs(60);
    while (cycles < 3 || failures_seen.load(Ordering::SeqCst) == 0)
        && std::time::Instant::now() < deadline
    {
        std::thread::sleep(Duration::from_millis(30));
        db.execute_batch(BLOCK).unwrap();
        std::thread::sleep(Duration::from_millis(20));
        db.execute_batch("DROP TRIGGER block;").unwrap();
        cycles += 1;
    }
    stop.store(true, Ordering::SeqCst);
    let mut ok = BTreeMap::new();
    let mut failed = 0;
    for worker in workers {
        for (id, result) in worker.join().unwrap() {
            match result {
                Ok(seq) => assert!(ok.insert(seq, format!("inv-{id}")).is_none()),
                Err(LedgerError::AppendFailed { .. }) => failed += 1,
                Err(e) => panic!("unexpected error: {e}"),
            }
        }
    }
    assert!(failed > 0, "the trigger never blocked a commit");
    let n = ok.len() as u64;
    assert_eq!(
        ok.keys().copied().collect::<Vec<_>>(),
        (1..=n).collect::<Vec<_>>()
    );
    assert_eq!(ledger.verify().unwrap().records, n);
    common::assert_stored_where_told(&ledger, &ok);
}
