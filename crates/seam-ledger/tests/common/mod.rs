//! Helpers shared by the integration tests: entries, ledgers, and an
//! attacker's direct handle on the database file.

#![allow(dead_code)]

use std::path::Path;

use rusqlite::Connection;
use seam_ledger::{
    ChainLink, Consent, ConsentAnswer, ConsentBy, ConsentScope, Decision, Ed25519Signature, Entry,
    FailureKind, HEAD_SLOT_LEN, Ledger, LedgerPaths, LedgerReader, Record, Sha256Digest,
    SignedHead, VerifyError, VerifyFailure, VerifyReport, parse_head_file,
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
        decision: if i % 7 == 6 {
            Decision::Consent(Consent {
                answer: if i.is_multiple_of(2) {
                    ConsentAnswer::Granted
                } else {
                    ConsentAnswer::Denied
                },
                scope: ConsentScope::Once,
                by: if i.is_multiple_of(3) {
                    ConsentBy::Terminal
                } else {
                    ConsentBy::Socket { uid: 1000 }
                },
                policy_digest: "sha256:0a0b".to_owned(),
            })
        } else if i.is_multiple_of(3) {
            Decision::Refused {
                code: "policy_denied".to_owned(),
            }
        } else {
            Decision::Admitted
        },
        output_sha256: (!i.is_multiple_of(3) && i % 7 != 6)
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
        Err(VerifyError::Anchor(e)) => panic!("verify could not use the anchor: {e}"),
        Ok(report) => panic!("verify passed on a tampered ledger: {report:?}"),
    }
}

/// Asserts a failure's seq and kind.
pub fn assert_failure(f: &VerifyFailure, seq: u64, kind: FailureKind) {
    assert_eq!((f.seq, f.kind), (seq, kind), "wrong failure: {f}");
}

/// The owner's hand on the head file: signs {next generation, floor,
/// ceiling} with the ledger's own key and writes it over the slot that does
/// not hold the newest head, as the writer does. Used to put the head in the
/// states a crash can leave it in. Returns the slot written (0 = A, 1 = B).
pub fn owner_writes_head(home: &Path, floor: ChainLink, ceiling: ChainLink) -> usize {
    use ed25519_dalek::{Signer, SigningKey};
    let paths = LedgerPaths::new(home);
    let seed: [u8; 32] = std::fs::read(&paths.key_file).unwrap().try_into().unwrap();
    let key = SigningKey::from_bytes(&seed);
    let mut bytes = std::fs::read(&paths.head_file).unwrap();
    let slots = parse_head_file(&bytes).expect("a head file");
    let (newest, generation) = slots
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.as_ref().ok().map(|h| (i, h.generation)))
        .max_by_key(|(_, generation)| *generation)
        .expect("a well-formed slot");
    let mut head = SignedHead {
        generation: generation + 1,
        floor,
        ceiling,
        signature: Ed25519Signature([0; 64]),
    };
    head.signature = Ed25519Signature(key.sign(&head.message()).to_bytes());
    let slot = 1 - newest;
    bytes[slot * HEAD_SLOT_LEN..(slot + 1) * HEAD_SLOT_LEN].copy_from_slice(&head.to_slot_bytes());
    std::fs::write(&paths.head_file, bytes).unwrap();
    slot
}

/// Record `seq`'s place in the chain, as stored.
pub fn link_of(home: &Path, seq: u64) -> ChainLink {
    let record = LedgerReader::open(home)
        .unwrap()
        .records_after(seq - 1, 1)
        .unwrap()
        .remove(0);
    ChainLink::new(record.seq, record.hash)
}

/// Overwrites bytes of one slot of the head file (a torn or damaged write).
pub fn damage_slot(home: &Path, slot: usize, at: usize, with: &[u8]) {
    let path = LedgerPaths::new(home).head_file;
    let mut bytes = std::fs::read(&path).unwrap();
    let start = slot * HEAD_SLOT_LEN + at;
    bytes[start..start + with.len()].copy_from_slice(with);
    std::fs::write(&path, bytes).unwrap();
}

/// The slot holding the newest well-formed head.
pub fn newest_slot(home: &Path) -> usize {
    let bytes = std::fs::read(LedgerPaths::new(home).head_file).unwrap();
    parse_head_file(&bytes)
        .unwrap()
        .iter()
        .enumerate()
        .filter_map(|(i, s)| s.as_ref().ok().map(|h| (i, h.generation)))
        .max_by_key(|(_, generation)| *generation)
        .unwrap()
        .0
}

/// Every record the ledger holds is stored at the seq its caller was told
/// (`told`: seq → invocation id, as each append returned it).
pub fn assert_stored_where_told(ledger: &Ledger, told: &std::collections::BTreeMap<u64, String>) {
    let stored = ledger
        .reader()
        .unwrap()
        .records_after(0, usize::MAX)
        .unwrap();
    for record in stored {
        assert_eq!(told[&record.seq], record.entry.invocation_id);
    }
}
