//! An attacker edits a closed ledger with SQL (or swaps its head file); each
//! edit must be reported at the right seq with the right kind.

mod common;

use std::path::Path;

use common::{append_n, assert_failure, attacker_db, failure, newest_slot};
use ed25519_dalek::{Signer, SigningKey};
use rusqlite::params;
use seam_ledger::{
    FailureKind, HEAD_SLOT_LEN, Ledger, LedgerError, LedgerPaths, LedgerReader, Sha256Digest,
    canonical_json, verify,
};
use serde_json::json;

fn ledger_of(n: usize) -> tempfile::TempDir {
    let home = tempfile::tempdir().unwrap();
    append_n(home.path(), 1, n);
    verify(home.path(), None).expect("the untouched ledger verifies");
    home
}

fn verify_fails(home: &Path) -> seam_ledger::VerifyFailure {
    failure(verify(home, None))
}

#[test]
fn changed_params_are_a_bad_hash() {
    let home = ledger_of(10);
    attacker_db(home.path())
        .execute(
            "UPDATE records SET params = '{\"path\":\"/etc/shadow\"}' WHERE seq = 4",
            [],
        )
        .unwrap();
    let f = verify_fails(home.path());
    assert_failure(&f, 4, FailureKind::BadHash);
    assert!(f.message.contains("params"), "{f}");
}

#[test]
fn changed_params_with_fresh_digests_are_a_bad_signature() {
    // The attacker knows the encoding: fixes params_sha256 and the record hash.
    let home = ledger_of(10);
    let mut record = LedgerReader::open(home.path())
        .unwrap()
        .records_after(3, 1)
        .unwrap()
        .remove(0);
    record.entry.params = json!({"path": "/etc/shadow"});
    let text = canonical_json(&record.entry.params);
    record.params_sha256 = Sha256Digest::of(text.as_bytes());
    record.hash = record.expected_hash();
    attacker_db(home.path())
        .execute(
            "UPDATE records SET params = ?1, params_sha256 = ?2, hash = ?3 WHERE seq = 4",
            params![text, &record.params_sha256.0[..], &record.hash.0[..]],
        )
        .unwrap();
    // Record 5 still points at the old hash of 4, but 4 itself fails first.
    assert_failure(&verify_fails(home.path()), 4, FailureKind::BadSignature);
}

#[test]
fn a_deleted_row_is_a_gap() {
    let home = ledger_of(10);
    attacker_db(home.path())
        .execute("DELETE FROM records WHERE seq = 5", [])
        .unwrap();
    let f = verify_fails(home.path());
    assert_failure(&f, 5, FailureKind::Gap);
    assert!(f.message.contains("missing"), "{f}");
}

#[test]
fn a_deleted_first_row_is_a_gap() {
    let home = ledger_of(3);
    attacker_db(home.path())
        .execute("DELETE FROM records WHERE seq = 1", [])
        .unwrap();
    assert_failure(&verify_fails(home.path()), 1, FailureKind::Gap);
}

#[test]
fn swapped_rows_break_the_chain() {
    let home = ledger_of(10);
    attacker_db(home.path())
        .execute_batch(
            "UPDATE records SET seq = -3 WHERE seq = 3;
             UPDATE records SET seq = 3 WHERE seq = 4;
             UPDATE records SET seq = 4 WHERE seq = -3;",
        )
        .unwrap();
    assert_failure(&verify_fails(home.path()), 3, FailureKind::BrokenChain);
}

#[test]
fn swapped_contents_keeping_the_links_are_a_bad_hash() {
    // Swap everything but seq and prev_hash, so the chain links still line up.
    let home = ledger_of(10);
    let cols = "time_unix_nanos, invocation_id, turn_id, tool, tool_version, params, \
                params_sha256, decision, refusal_code, output_sha256, tainted, scrubbed";
    let db = attacker_db(home.path());
    db.execute_batch(&format!(
        "CREATE TEMP TABLE t AS SELECT seq, {cols} FROM records WHERE seq IN (6, 7);
         UPDATE records SET ({cols}) = (SELECT {cols} FROM t WHERE t.seq = 7) WHERE seq = 6;
         UPDATE records SET ({cols}) = (SELECT {cols} FROM t WHERE t.seq = 6) WHERE seq = 7;"
    ))
    .unwrap();
    drop(db);
    assert_failure(&verify_fails(home.path()), 6, FailureKind::BadHash);
}

#[test]
fn a_truncated_tail_is_caught_by_the_signed_head() {
    let home = ledger_of(10);
    attacker_db(home.path())
        .execute("DELETE FROM records WHERE seq > 7", [])
        .unwrap();
    let f = verify_fails(home.path());
    assert_failure(&f, 8, FailureKind::Truncated);
    assert!(f.message.contains("8..=10"), "{f}");
    // And the gate will not start appending to it.
    match Ledger::open(home.path()) {
        Err(LedgerError::Tampered { failure, .. }) => {
            assert_eq!(failure.kind, FailureKind::Truncated)
        }
        other => panic!("open accepted a truncated ledger: {other:?}"),
    }
}

#[test]
fn an_emptied_ledger_is_caught_by_the_signed_head() {
    let home = ledger_of(5);
    attacker_db(home.path())
        .execute("DELETE FROM records", [])
        .unwrap();
    assert_failure(&verify_fails(home.path()), 1, FailureKind::Truncated);
}

#[test]
fn a_rolled_back_head_is_caught() {
    let home = tempfile::tempdir().unwrap();
    let head_file = LedgerPaths::new(home.path()).head_file;
    append_n(home.path(), 1, 6);
    let old_head = std::fs::read(&head_file).unwrap();
    append_n(home.path(), 7, 4);
    verify(home.path(), None).unwrap();
    std::fs::write(&head_file, &old_head).unwrap();
    let f = verify_fails(home.path());
    assert_failure(&f, 7, FailureKind::HeadBehind);
    assert!(f.message.contains("rolled back"), "{f}");
    assert!(f.message.contains("to seq 10"), "{f}");
    // No crash leaves records beyond the ceiling: the gate will not start on it.
    match Ledger::open(home.path()) {
        Err(LedgerError::Tampered { failure, .. }) => {
            assert_eq!(failure.kind, FailureKind::HeadBehind)
        }
        other => panic!("open accepted a rolled-back head: {other:?}"),
    }
    assert!(matches!(
        seam_ledger::repair_head(home.path()),
        Err(LedgerError::Tampered { .. })
    ));
}

#[test]
fn one_rolled_back_slot_is_outvoted_by_the_newer_one() {
    // Only slot-sized pieces of an old head file put back: the newest slot
    // still wins, so nothing is hidden and nothing fails.
    let home = tempfile::tempdir().unwrap();
    let head_file = LedgerPaths::new(home.path()).head_file;
    append_n(home.path(), 1, 6);
    let old = std::fs::read(&head_file).unwrap();
    append_n(home.path(), 7, 4);
    let stale = 1 - newest_slot(home.path());
    let mut now = std::fs::read(&head_file).unwrap();
    let range = stale * HEAD_SLOT_LEN..(stale + 1) * HEAD_SLOT_LEN;
    now[range.clone()].copy_from_slice(&old[range]);
    std::fs::write(&head_file, now).unwrap();
    let report = verify(home.path(), None).unwrap();
    assert_eq!(
        (report.records, report.head.seq, report.unsealed),
        (10, 10, 0)
    );
}

#[test]
fn a_head_for_the_right_seq_but_another_hash_is_a_head_mismatch() {
    // Two ledgers under one key (the attacker copies the key's ledger twice):
    // a head from one does not match the other's record at the same seq.
    let home = tempfile::tempdir().unwrap();
    append_n(home.path(), 1, 4);
    let twin = tempfile::tempdir().unwrap();
    let (p, t) = (LedgerPaths::new(home.path()), LedgerPaths::new(twin.path()));
    std::fs::create_dir_all(&t.keys_dir).unwrap();
    std::fs::copy(&p.key_file, &t.key_file).unwrap();
    append_n(twin.path(), 50, 4);
    std::fs::copy(&t.head_file, &p.head_file).unwrap();
    assert_failure(&verify_fails(home.path()), 4, FailureKind::HeadMismatch);
}

#[test]
fn a_record_re_signed_with_another_key_is_a_bad_signature() {
    let home = ledger_of(10);
    let intruder = SigningKey::from_bytes(&[42u8; 32]);
    let mut record = LedgerReader::open(home.path())
        .unwrap()
        .records_after(5, 1)
        .unwrap()
        .remove(0);
    record.entry.tainted = !record.entry.tainted;
    record.hash = record.expected_hash();
    let signature = intruder.sign(record.hash.as_bytes()).to_bytes();
    attacker_db(home.path())
        .execute(
            "UPDATE records SET tainted = ?1, hash = ?2, signature = ?3 WHERE seq = 6",
            params![record.entry.tainted, &record.hash.0[..], &signature[..]],
        )
        .unwrap();
    let f = verify_fails(home.path());
    assert_failure(&f, 6, FailureKind::BadSignature);
}

#[test]
fn a_head_signed_by_another_key_is_a_bad_head() {
    let home = ledger_of(3);
    let stranger = tempfile::tempdir().unwrap();
    append_n(stranger.path(), 1, 3);
    std::fs::copy(
        LedgerPaths::new(stranger.path()).head_file,
        LedgerPaths::new(home.path()).head_file,
    )
    .unwrap();
    assert_failure(&verify_fails(home.path()), 3, FailureKind::BadHead);
}

#[test]
fn a_missing_head_is_a_bad_head() {
    let home = ledger_of(3);
    std::fs::remove_file(LedgerPaths::new(home.path()).head_file).unwrap();
    assert_failure(&verify_fails(home.path()), 1, FailureKind::BadHead);
    assert!(matches!(
        Ledger::open(home.path()),
        Err(LedgerError::Tampered { .. })
    ));
}

#[test]
fn a_malformed_column_is_reported_at_its_row() {
    let home = ledger_of(5);
    attacker_db(home.path())
        .execute("UPDATE records SET hash = x'00' WHERE seq = 2", [])
        .unwrap();
    let f = verify_fails(home.path());
    assert_failure(&f, 2, FailureKind::Malformed);
    assert!(f.message.contains("hash"), "{f}");
}

#[test]
fn a_planted_trigger_stops_the_writer() {
    let home = ledger_of(2);
    attacker_db(home.path())
        .execute_batch(
            "CREATE TRIGGER t AFTER INSERT ON records BEGIN DELETE FROM records WHERE seq = 1; END;",
        )
        .unwrap();
    match Ledger::open(home.path()) {
        Err(LedgerError::UnexpectedSchema { reason, .. }) => assert!(reason.contains("trigger")),
        other => panic!("open accepted a ledger with a trigger: {other:?}"),
    }
}

#[test]
fn changes_the_hash_cannot_see_are_refused_as_malformed() {
    // Columns whose stored form carries more than the hashed value: a code on
    // an admitted call, or the scrubbed list re-encoded. Equal in meaning, but
    // still someone's edit.
    let home = ledger_of(5);
    attacker_db(home.path())
        .execute("UPDATE records SET refusal_code = 'note' WHERE seq = 1", [])
        .unwrap();
    assert_failure(&verify_fails(home.path()), 1, FailureKind::Malformed);
    let home = ledger_of(5);
    attacker_db(home.path())
        .execute("UPDATE records SET scrubbed = '[ ]' WHERE seq = 2", [])
        .unwrap();
    assert_failure(&verify_fails(home.path()), 2, FailureKind::Malformed);
}

#[test]
fn a_consent_record_is_covered_by_the_hash() {
    // Record 6 is a consent given on the terminal (common::entry): saying another party gave
    // it, or widening its scope, is a bad hash; the same consent re-encoded is malformed.
    for edit in [
        r#"{"answer":"granted","scope":"once","by":{"via":"socket","uid":0},"policy_digest":"sha256:0a0b"}"#,
        r#"{"answer":"granted","scope":"always","by":{"via":"terminal"},"policy_digest":"sha256:0a0b"}"#,
    ] {
        let home = ledger_of(8);
        attacker_db(home.path())
            .execute("UPDATE records SET refusal_code = ?1 WHERE seq = 6", [edit])
            .unwrap();
        assert_failure(&verify_fails(home.path()), 6, FailureKind::BadHash);
    }
    let home = ledger_of(8);
    attacker_db(home.path())
        .execute(
            "UPDATE records SET refusal_code = ?1 WHERE seq = 6",
            [r#"{"answer": "granted","scope":"once","by":{"via":"terminal"},"policy_digest":"sha256:0a0b"}"#],
        )
        .unwrap();
    assert_failure(&verify_fails(home.path()), 6, FailureKind::Malformed);
}
