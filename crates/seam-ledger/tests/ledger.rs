//! Opening, appending, reopening and reading a real ledger.

mod common;

use std::os::unix::fs::{MetadataExt, PermissionsExt};

use common::{append_n, assert_failure, entry, failure};
use seam_home::SeamHome;
use seam_ledger::{
    FailureKind, Ledger, LedgerError, LedgerPaths, LedgerPublicKey, LedgerReader, Record,
    Sha256Digest, public_key, verify,
};

fn mode(path: &std::path::Path) -> u32 {
    std::fs::metadata(path).unwrap().mode() & 0o777
}

#[test]
fn open_makes_an_owner_only_layout() {
    let home = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(home.path()).unwrap();
    ledger.append(entry(1)).unwrap();
    let p = LedgerPaths::new(home.path());
    assert_eq!(mode(&p.keys_dir), 0o700);
    assert_eq!(mode(&p.ledger_dir), 0o700);
    assert_eq!(mode(&p.key_file), 0o600);
    assert_eq!(std::fs::metadata(&p.key_file).unwrap().len(), 32);
    assert_eq!(mode(&p.db_file), 0o600);
    let [wal, shm] = [
        p.ledger_dir.join("ledger.sqlite-wal"),
        p.ledger_dir.join("ledger.sqlite-shm"),
    ];
    assert_eq!(mode(&wal), 0o600, "the WAL must be owner-only too");
    assert_eq!(mode(&shm), 0o600);
    ledger.close().unwrap();
    assert_eq!(mode(&p.head_file), 0o600);
}

#[test]
fn a_wide_open_ledger_dir_is_narrowed() {
    let home = tempfile::tempdir().unwrap();
    let p = LedgerPaths::new(home.path());
    std::fs::create_dir_all(&p.ledger_dir).unwrap();
    std::fs::set_permissions(&p.ledger_dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    Ledger::open(home.path()).unwrap().close().unwrap();
    assert_eq!(mode(&p.ledger_dir), 0o700);
}

#[test]
fn append_returns_the_record_as_stored() {
    let home = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(home.path()).unwrap();
    let first = ledger.append(entry(3)).unwrap();
    let second = ledger.append(entry(5)).unwrap();
    assert_eq!((first.seq, second.seq), (1, 2));
    assert_eq!(first.prev_hash, Sha256Digest::ZERO);
    assert_eq!(second.prev_hash, first.hash);
    assert_eq!(first.entry, entry(3));
    assert_eq!(first.hash, first.expected_hash());
    assert!(
        ledger
            .public_key()
            .verifies(first.hash.as_bytes(), &first.signature)
    );
    let stored = ledger.reader().unwrap().tail(10).unwrap();
    assert_eq!(stored, vec![first, second]);
}

#[test]
fn reopening_continues_the_chain_with_the_same_key() {
    let home = tempfile::tempdir().unwrap();
    let a = append_n(home.path(), 1, 3);
    let key_before = public_key(home.path()).unwrap();
    let b = append_n(home.path(), 4, 3);
    assert_eq!(public_key(home.path()).unwrap(), key_before);
    assert_eq!(b[0].seq, 4);
    assert_eq!(b[0].prev_hash, a[2].hash);
    let report = verify(home.path(), None).unwrap();
    assert_eq!(report.records, 6);
    assert_eq!((report.head.seq, report.head.hash), (6, b[2].hash));
}

#[test]
fn a_new_ledger_verifies_empty() {
    let home = tempfile::tempdir().unwrap();
    Ledger::open(home.path()).unwrap().close().unwrap();
    let report = verify(home.path(), None).unwrap();
    assert_eq!((report.records, report.head.seq), (0, 0));
}

#[test]
fn a_second_writer_is_refused() {
    let home = tempfile::tempdir().unwrap();
    let first = Ledger::open(home.path()).unwrap();
    match Ledger::open_with_lock_wait(home.path(), std::time::Duration::from_millis(50)) {
        Err(LedgerError::Busy { .. }) => {}
        other => panic!("a second writer opened: {other:?}"),
    }
    first.close().unwrap();
    Ledger::open(home.path()).unwrap().close().unwrap();
}

#[test]
fn no_new_key_for_a_ledger_with_records() {
    let home = tempfile::tempdir().unwrap();
    append_n(home.path(), 1, 2);
    std::fs::remove_file(LedgerPaths::new(home.path()).key_file).unwrap();
    match Ledger::open(home.path()) {
        Err(LedgerError::KeyMissing {
            ledger_has_records: true,
            ..
        }) => {}
        other => panic!("opened without the ledger's key: {other:?}"),
    }
}

#[test]
fn a_key_readable_by_others_is_refused() {
    let home = tempfile::tempdir().unwrap();
    append_n(home.path(), 1, 1);
    let key_file = LedgerPaths::new(home.path()).key_file;
    std::fs::set_permissions(&key_file, std::fs::Permissions::from_mode(0o644)).unwrap();
    assert!(matches!(
        Ledger::open(home.path()),
        Err(LedgerError::InsecureKeyFile { mode: 0o644, .. })
    ));
    assert!(matches!(
        public_key(home.path()),
        Err(LedgerError::InsecureKeyFile { .. })
    ));
}

#[test]
fn public_key_text_is_what_verify_takes() {
    let home = tempfile::tempdir().unwrap();
    append_n(home.path(), 1, 2);
    let text = public_key(home.path()).unwrap().to_string();
    assert_eq!(text.len(), 64);
    let parsed: LedgerPublicKey = text.parse().unwrap();
    assert_eq!(verify(home.path(), Some(&parsed)).unwrap().records, 2);
}

#[test]
fn a_copied_ledger_verifies_with_the_public_key_alone() {
    let home = tempfile::tempdir().unwrap();
    append_n(home.path(), 1, 20);
    let key = public_key(home.path()).unwrap();
    let copy = tempfile::tempdir().unwrap();
    for name in ["ledger.sqlite", "head"] {
        std::fs::copy(
            SeamHome::new(home.path()).ledger().join(name),
            copy.path().join(name),
        )
        .unwrap();
    }
    let reader = LedgerReader::open_dir(copy.path()).unwrap();
    assert_eq!(reader.verify(&key).unwrap().records, 20);
    let wrong: LedgerPublicKey = common_other_key(&copy);
    assert_failure(
        &failure(reader.verify(&wrong)),
        1,
        FailureKind::BadSignature,
    );
}

fn common_other_key(scratch: &tempfile::TempDir) -> LedgerPublicKey {
    let other_home = scratch.path().join("other-home");
    Ledger::open(&other_home).unwrap().close().unwrap();
    public_key(&other_home).unwrap()
}

#[test]
fn a_copy_taken_while_the_writer_is_open_verifies() {
    let home = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(home.path()).unwrap();
    for i in 0..15 {
        ledger.append(entry(i)).unwrap();
    }
    ledger.sync_head().unwrap();
    let copy = tempfile::tempdir().unwrap();
    for name in ["ledger.sqlite", "ledger.sqlite-wal", "head"] {
        std::fs::copy(
            SeamHome::new(home.path()).ledger().join(name),
            copy.path().join(name),
        )
        .unwrap();
    }
    let key = ledger.public_key();
    ledger.close().unwrap();
    let report = LedgerReader::open_dir(copy.path())
        .unwrap()
        .verify(&key)
        .unwrap();
    assert_eq!(report.records, 15);
}

#[test]
fn tail_follow_and_export_read_records_in_order() {
    let home = tempfile::tempdir().unwrap();
    let appended = append_n(home.path(), 1, 2500);
    let reader = LedgerReader::open(home.path()).unwrap();
    assert_eq!(reader.last_seq().unwrap(), 2500);
    let tail = reader.tail(3).unwrap();
    assert_eq!(
        tail.iter().map(|r| r.seq).collect::<Vec<_>>(),
        vec![2498, 2499, 2500]
    );
    let after = reader.records_after(5, 2).unwrap();
    assert_eq!(after, appended[5..7].to_vec());
    assert!(reader.records_after(2500, 10).unwrap().is_empty());
    let all: Vec<Record> = reader.records().collect::<Result<_, _>>().unwrap();
    assert_eq!(all, appended);
    for record in all.iter().take(20) {
        let line = record.to_json_line();
        assert!(!line.contains('\n'));
        let back: Record = serde_json::from_str(&line).unwrap();
        assert_eq!(&back, record);
    }
}

#[test]
fn follow_sees_appends_of_a_live_writer() {
    let home = tempfile::tempdir().unwrap();
    let ledger = Ledger::open(home.path()).unwrap();
    ledger.append(entry(1)).unwrap();
    let reader = LedgerReader::open(home.path()).unwrap();
    let seen = reader.records_after(0, 100).unwrap();
    assert_eq!(seen.len(), 1);
    let new = ledger.append(entry(2)).unwrap();
    assert_eq!(reader.records_after(seen[0].seq, 100).unwrap(), vec![new]);
    ledger.close().unwrap();
}

#[test]
fn summary_is_one_line_with_the_essentials() {
    let home = tempfile::tempdir().unwrap();
    let r = append_n(home.path(), 3, 1).remove(0);
    let line = r.summary();
    assert!(line.starts_with("1 "), "{line}");
    for part in [
        "web.search@1",
        "refused(policy_denied)",
        "id=inv-3",
        "turn=turn-0",
    ] {
        assert!(line.contains(part), "{line} lacks {part}");
    }
    assert!(!line.contains('\n'));
}

#[test]
fn a_verify_needs_a_ledger() {
    let home = tempfile::tempdir().unwrap();
    let key = {
        let other = tempfile::tempdir().unwrap();
        Ledger::open(other.path()).unwrap().close().unwrap();
        public_key(other.path()).unwrap()
    };
    assert!(matches!(
        verify(home.path(), Some(&key)),
        Err(seam_ledger::VerifyError::Ledger(
            LedgerError::NoLedger { .. }
        ))
    ));
}

#[test]
fn repair_head_creates_nothing_and_respects_a_live_writer() {
    let home = tempfile::tempdir().unwrap();
    assert!(matches!(
        seam_ledger::repair_head(home.path()),
        Err(LedgerError::NoLedger { .. })
    ));
    assert!(!LedgerPaths::new(home.path()).keys_dir.exists());
    append_n(home.path(), 1, 2);
    assert_eq!(seam_ledger::repair_head(home.path()).unwrap(), None);
    let live = Ledger::open(home.path()).unwrap();
    assert!(matches!(
        seam_ledger::repair_head(home.path()),
        Err(LedgerError::Busy { .. })
    ));
    live.close().unwrap();
}
