//! External anchors: a consistent rollback (the tail cut and the head file of that time put
//! back) passes `verify` but not `verify_against` an anchor taken before it.

mod common;

use std::path::Path;

use common::{append_n, assert_failure, attacker_db, entry, failure};
use seam_ledger::{
    AnchorError, FailureKind, HeadAnchor, Ledger, LedgerPaths, VerifyError, VerifyReport, anchor,
    append_anchor, read_anchor_file, verify, verify_against,
};

/// The report of `verify_against`, as `verify` gives it (for `common::failure`).
fn against(home: &Path, file: &Path) -> Result<VerifyReport, VerifyError> {
    verify_against(home, None, file).map(|(report, _)| report)
}

/// A ledger of 6 records, the head file of that moment, then 4 more and an anchor at 10 kept
/// in a file outside the home.
struct Rolled {
    home: tempfile::TempDir,
    elsewhere: tempfile::TempDir,
    old_head: Vec<u8>,
    anchors: std::path::PathBuf,
}

fn anchored_at_ten() -> Rolled {
    let home = tempfile::tempdir().unwrap();
    let elsewhere = tempfile::tempdir().unwrap();
    let head_file = LedgerPaths::new(home.path()).head_file;
    append_n(home.path(), 1, 6);
    let old_head = std::fs::read(&head_file).unwrap();
    append_n(home.path(), 7, 4);
    let anchors = elsewhere.path().join("anchors.jsonl");
    let a = anchor(home.path(), None).unwrap();
    assert_eq!(a.seq(), 10);
    append_anchor(&anchors, &a).unwrap();
    Rolled {
        home,
        elsewhere,
        old_head,
        anchors,
    }
}

/// The attacker cuts the records after 6 and puts back the head file of that time.
fn roll_back_to_six(r: &Rolled) {
    attacker_db(r.home.path())
        .execute("DELETE FROM records WHERE seq > 6", [])
        .unwrap();
    std::fs::write(LedgerPaths::new(r.home.path()).head_file, &r.old_head).unwrap();
}

#[test]
fn a_consistent_rollback_passes_verify_but_fails_against_the_anchor() {
    let r = anchored_at_ten();
    let report = against(r.home.path(), &r.anchors).unwrap();
    assert_eq!(report.records, 10);

    roll_back_to_six(&r);
    // Every record and the head check out: plain verification cannot see it.
    let report = verify(r.home.path(), None).expect("a consistent rollback verifies");
    assert_eq!((report.records, report.head.seq), (6, 6));
    // The anchor does.
    let f = failure(against(r.home.path(), &r.anchors));
    assert_failure(&f, 7, FailureKind::BehindAnchor);
    assert!(f.message.contains("up to seq 10"), "{f}");
    assert!(f.message.contains("ends at seq 6"), "{f}");
    assert!(f.message.contains("7..=10"), "{f}");
}

#[test]
fn a_ledger_rewritten_after_a_rollback_disagrees_with_the_anchor() {
    let r = anchored_at_ten();
    roll_back_to_six(&r);
    // The host's key holder writes a different history from 7 on, up to and past 10.
    let ledger = Ledger::open(r.home.path()).expect("the rolled-back ledger opens");
    for i in 100..106 {
        ledger.append(entry(i)).unwrap();
    }
    ledger.close().unwrap();
    let report = verify(r.home.path(), None).unwrap();
    assert_eq!(report.records, 12);
    let f = failure(against(r.home.path(), &r.anchors));
    assert_failure(&f, 10, FailureKind::AnchorMismatch);
    assert!(f.message.contains("record 10"), "{f}");
    assert!(f.message.contains("ends at seq 12"), "{f}");
}

#[test]
fn an_honest_ledger_that_grew_passes_against_its_newest_anchor() {
    let r = anchored_at_ten();
    append_n(r.home.path(), 11, 3);
    append_anchor(&r.anchors, &anchor(r.home.path(), None).unwrap()).unwrap();
    append_n(r.home.path(), 14, 2);
    let (report, used) = verify_against(r.home.path(), None, &r.anchors).unwrap();
    assert_eq!(report.records, 15);
    assert_eq!((used.anchor.seq(), used.line), (13, 2));
    // Cut back to 11: behind the newest anchor (13), though not the older one (10).
    attacker_db(r.home.path())
        .execute("DELETE FROM records WHERE seq > 11", [])
        .unwrap();
    let f = failure(against(r.home.path(), &r.anchors));
    assert!(
        matches!(f.kind, FailureKind::BehindAnchor | FailureKind::Truncated),
        "{f}"
    );
    assert!(f.seq <= 12, "{f}");
}

#[test]
fn anchor_lines_round_trip_and_a_forged_one_is_refused() {
    let r = anchored_at_ten();
    let key = seam_ledger::public_key(r.home.path()).unwrap();
    let read = read_anchor_file(&r.anchors, &key).unwrap();
    let line = std::fs::read_to_string(&r.anchors).unwrap();
    assert_eq!(line.lines().count(), 1);
    assert_eq!(HeadAnchor::parse_line(line.trim()).unwrap(), read.anchor);
    assert!(
        line.contains("\"format\":\"seam-ledger-anchor/v1\""),
        "{line}"
    );
    assert!(line.contains(&key.to_string()), "{line}");

    // An anchor claiming seq 11 without the key's signature.
    let mut forged = read.anchor;
    forged.head.floor.seq = 11;
    forged.head.ceiling.seq = 11;
    let forged_file = r.elsewhere.path().join("forged.jsonl");
    std::fs::write(&forged_file, format!("{}\n", forged.to_json_line())).unwrap();
    match verify_against(r.home.path(), None, &forged_file) {
        Err(VerifyError::Anchor(e @ AnchorError::BadSignature { .. })) => {
            let text = e.to_string();
            assert!(text.contains("forged.jsonl, line 1"), "{text}");
        }
        other => panic!("a forged anchor was used: {other:?}"),
    }
    // ...and in code, too.
    let reader = seam_ledger::LedgerReader::open(r.home.path()).unwrap();
    assert!(matches!(
        reader.verify_against(&key, &forged),
        Err(VerifyError::Anchor(AnchorError::BadSignature { .. }))
    ));
}

#[test]
fn a_bad_or_foreign_anchor_file_is_named() {
    let r = anchored_at_ten();
    let other = tempfile::tempdir().unwrap();
    append_n(other.path(), 1, 2);
    let foreign = r.elsewhere.path().join("foreign.jsonl");
    append_anchor(&foreign, &anchor(other.path(), None).unwrap()).unwrap();
    match verify_against(r.home.path(), None, &foreign) {
        Err(VerifyError::Anchor(e @ AnchorError::NoAnchor { other_keys: 1, .. })) => {
            assert!(e.to_string().contains("foreign.jsonl"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    let garbled = r.elsewhere.path().join("garbled.jsonl");
    let good = std::fs::read_to_string(&r.anchors).unwrap();
    std::fs::write(&garbled, format!("{good}\n{{\"format\":1}}\n")).unwrap();
    match verify_against(r.home.path(), None, &garbled) {
        Err(VerifyError::Anchor(e @ AnchorError::Malformed { line: 3, .. })) => {
            assert!(e.to_string().contains("garbled.jsonl, line 3"), "{e}");
        }
        other => panic!("{other:?}"),
    }
    // A last line without its newline is ended before the next is appended.
    let unended = r.elsewhere.path().join("unended.jsonl");
    std::fs::write(&unended, good.trim_end()).unwrap();
    append_anchor(&unended, &anchor(r.home.path(), None).unwrap()).unwrap();
    let key = seam_ledger::public_key(r.home.path()).unwrap();
    assert_eq!(read_anchor_file(&unended, &key).unwrap().line, 1);
    assert_eq!(
        std::fs::read_to_string(&unended).unwrap().lines().count(),
        2
    );
}
