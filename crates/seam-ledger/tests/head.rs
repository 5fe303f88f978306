//! The head file's two slots: the states a crash can leave them in verify,
//! a torn slot falls back to the other, and what no crash can produce fails.

mod common;

use std::path::Path;

use common::{
    append_n, assert_failure, attacker_db, damage_slot, failure, link_of, newest_slot,
    owner_writes_head,
};
use seam_ledger::{
    ChainLink, FailureKind, HEAD_FILE_LEN, Ledger, LedgerError, LedgerPaths, Sha256Digest, verify,
};

fn ledger_of(n: usize) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    append_n(home.path(), 1, n);
    let report = verify(home.path(), None).expect("the untouched ledger verifies");
    assert_eq!(
        (report.records, report.head.seq, report.unsealed),
        (n as u64, n as u64, 0)
    );
    home
}

fn verify_fails(home: &Path) -> seam_ledger::VerifyFailure {
    failure(verify(home, None))
}

#[test]
fn a_clean_close_leaves_a_sealed_head_of_fixed_size() {
    let home = ledger_of(5);
    let paths = LedgerPaths::new(home.path());
    assert_eq!(
        std::fs::metadata(&paths.head_file).unwrap().len(),
        HEAD_FILE_LEN as u64
    );
    let report = verify(home.path(), None).unwrap();
    let sealed = link_of(home.path(), 5);
    assert_eq!(report.signed_head.floor, sealed);
    assert_eq!(report.signed_head.ceiling, sealed);
    assert!(!report.writer_live);
}

#[test]
fn records_between_floor_and_ceiling_verify_and_are_counted() {
    // The writer died after committing 8..=10 and before sealing them.
    let home = ledger_of(10);
    owner_writes_head(
        home.path(),
        link_of(home.path(), 7),
        link_of(home.path(), 10),
    );
    let report = verify(home.path(), None).unwrap();
    assert_eq!(
        (report.records, report.head.seq, report.unsealed),
        (10, 7, 3)
    );
    // The next open checks them and seals the head.
    let ledger = Ledger::open(home.path()).unwrap();
    let recovery = ledger.head_recovery().expect("open reports the seal");
    assert_eq!((recovery.from_seq, recovery.to_seq), (7, 10));
    ledger.close().unwrap();
    let report = verify(home.path(), None).unwrap();
    assert_eq!(
        (report.records, report.head.seq, report.unsealed),
        (10, 10, 0)
    );
}

#[test]
fn a_ceiling_whose_batch_never_committed_verifies() {
    // The writer died after its ceiling write, before the commit.
    let home = ledger_of(10);
    let beyond = ChainLink::new(14, Sha256Digest::of(b"a batch that never committed"));
    owner_writes_head(home.path(), link_of(home.path(), 10), beyond);
    let report = verify(home.path(), None).unwrap();
    assert_eq!((report.records, report.unsealed), (10, 0));
    assert_eq!(report.signed_head.ceiling, beyond);
    // Open lowers the ceiling back to the last record; nothing to recover.
    let ledger = Ledger::open(home.path()).unwrap();
    assert_eq!(ledger.head_recovery(), None);
    let next = ledger.append(common::entry(11)).unwrap();
    assert_eq!(next.seq, 11);
    ledger.close().unwrap();
    let report = verify(home.path(), None).unwrap();
    assert_eq!((report.records, report.head.seq), (11, 11));
}

#[test]
fn records_below_the_floor_removed_are_truncation() {
    let home = ledger_of(10);
    owner_writes_head(
        home.path(),
        link_of(home.path(), 7),
        link_of(home.path(), 10),
    );
    attacker_db(home.path())
        .execute("DELETE FROM records WHERE seq >= 7", [])
        .unwrap();
    let f = verify_fails(home.path());
    assert_failure(&f, 7, FailureKind::Truncated);
    assert!(f.message.contains("7..=7"), "{f}");
}

#[test]
fn a_ledger_ending_at_the_ceiling_must_have_its_hash() {
    let home = ledger_of(10);
    let other = ChainLink::new(10, Sha256Digest::of(b"another record 10"));
    owner_writes_head(home.path(), link_of(home.path(), 7), other);
    let f = verify_fails(home.path());
    assert_failure(&f, 10, FailureKind::HeadMismatch);
    assert!(f.message.contains("ceiling"), "{f}");
}

#[test]
fn a_floor_naming_another_hash_is_a_head_mismatch() {
    let home = ledger_of(10);
    let other = ChainLink::new(6, Sha256Digest::of(b"another record 6"));
    owner_writes_head(home.path(), other, link_of(home.path(), 10));
    assert_failure(&verify_fails(home.path()), 6, FailureKind::HeadMismatch);
}

#[test]
fn a_torn_newest_slot_falls_back_to_the_other() {
    let home = ledger_of(10);
    let newest = newest_slot(home.path());
    // Half a slot written: the tail of the slot keeps its old bytes.
    damage_slot(home.path(), newest, 40, &[0x5a; 60]);
    let report = verify(home.path(), None).expect("the older slot is whole");
    // The older slot is the ceiling write of the last append: floor 9, ceiling 10.
    assert_eq!(
        (report.records, report.head.seq, report.unsealed),
        (10, 9, 1)
    );
    assert_eq!(report.signed_head.ceiling, link_of(home.path(), 10));
    // The writer overwrites the torn slot, never the good one.
    let ledger = Ledger::open(home.path()).unwrap();
    assert_eq!(newest_slot(home.path()), newest);
    ledger.close().unwrap();
    assert_eq!(verify(home.path(), None).unwrap().unsealed, 0);
}

#[test]
fn both_slots_bad_is_a_bad_head() {
    let home = ledger_of(4);
    damage_slot(home.path(), 0, 30, b"zz");
    damage_slot(home.path(), 1, 100, b"zz");
    let f = verify_fails(home.path());
    assert_failure(&f, 1, FailureKind::BadHead);
    assert!(
        f.message.contains("slot A") && f.message.contains("slot B"),
        "{f}"
    );
    assert!(f.message.contains("torn or damaged"), "{f}");
    match Ledger::open(home.path()) {
        Err(LedgerError::Tampered { failure, .. }) => {
            assert_eq!(failure.kind, FailureKind::BadHead)
        }
        other => panic!("open accepted a head with no good slot: {other:?}"),
    }
}

#[test]
fn a_head_of_the_earlier_format_is_named() {
    let home = ledger_of(2);
    std::fs::write(
        LedgerPaths::new(home.path()).head_file,
        br#"{"format":"seam-ledger-head/v1","seq":2,"hash":"00","signature":"00"}"#,
    )
    .unwrap();
    let f = verify_fails(home.path());
    assert_failure(&f, 1, FailureKind::BadHead);
    assert!(f.message.contains("earlier format"), "{f}");
}

#[test]
fn a_head_file_of_the_wrong_size_is_a_bad_head() {
    let home = ledger_of(2);
    let path = LedgerPaths::new(home.path()).head_file;
    let mut bytes = std::fs::read(&path).unwrap();
    bytes.push(0);
    std::fs::write(&path, bytes).unwrap();
    let f = verify_fails(home.path());
    assert_failure(&f, 1, FailureKind::BadHead);
    assert!(f.message.contains("8193 bytes"), "{f}");
}
