//! Helpers shared by the integration tests: entries, ledgers, and an
//! attacker's direct handle on the database file.

#![allow(dead_code)]

use std::path::Path;

use rusqlite::Connection;
use seam_ledger::{
    Decision, Entry, FailureKind, Ledger, LedgerPaths, Record, Sha256Digest, VerifyError,
    VerifyFailure, VerifyReport,
};
use serde_json::json;

/// A varied entry: refusals, taint, scrubbed shapes and turn ids all occur.
pub fn entry(i: usize) -> Entry {
    Entry {
        invocation_id: format!("inv-{i}"),
        turn_id: (!i.is_multiple_of(4)).then(|| format!("turn-{}", i / 4)),
        tool: if i.is_multiple_of(2) {
            "files.read"
        } else {
            "web.search"
        }
        .to_owned(),
        tool_version: "1".to_owned(),
        params: json!({"path": format!("/home/owner/notes/{i}.txt"), "max_bytes": 4096 + i}),
        decision: if i.is_multiple_of(3) {
            Decision::Refused {
                code: "policy_denied".to_owned(),
            }
        } else {
            Decision::Admitted
        },
        output_sha256: (!i.is_multiple_of(3))
            .then(|| Sha256Digest::of(format!("output {i}").as_bytes())),
        tainted: i.is_multiple_of(2),
        scrubbed: if i.is_multiple_of(5) {
            vec!["aws_access_key".to_owned(), "github_token".to_owned()]
        } else {
            Vec::new()
        },
    }
}

/// Opens the ledger in `home`, appends entries `from..from+n`, closes it
/// (so the head is final). Returns the records.
pub fn append_n(home: &Path, from: usize, n: usize) -> Vec<Record> {
    let ledger = Ledger::open(home).expect("open ledger");
    let records = (from..from + n)
        .map(|i| ledger.append(entry(i)).expect("append"))
        .collect();
    ledger.close().expect("close ledger");
    records
}

/// The attacker: a plain read-write SQLite connection on the ledger file.
pub fn attacker_db(home: &Path) -> Connection {
    Connection::open(LedgerPaths::new(home).db_file).expect("open db as attacker")
}

/// The failure of a verify that must fail.
pub fn failure(result: Result<VerifyReport, VerifyError>) -> VerifyFailure {
    match result {
        Err(VerifyError::Failed(f)) => f,
        Err(VerifyError::Ledger(e)) => panic!("verify could not read the ledger: {e}"),
        Ok(report) => panic!("verify passed on a tampered ledger: {report:?}"),
    }
}

/// Asserts a failure's seq and kind.
pub fn assert_failure(f: &VerifyFailure, seq: u64, kind: FailureKind) {
    assert_eq!((f.seq, f.kind), (seq, kind), "wrong failure: {f}");
}
