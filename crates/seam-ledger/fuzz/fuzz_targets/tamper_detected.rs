//! Any change to any column of any stored record must make `verify` fail,
//! whatever value the attacker writes. A fixture ledger of 4 records is built
//! once; each input picks a row, a column and a new value, applies it to a
//! fresh copy with SQL, and verifies the copy with the ledger's public key.

#![no_main]

use std::path::PathBuf;
use std::sync::OnceLock;

use libfuzzer_sys::fuzz_target;
use rusqlite::types::Value;
use seam_ledger::{
    Decision, Entry, Ledger, LedgerPublicKey, LedgerReader, Sha256Digest, VerifyError,
};

const COLUMNS: [&str; 16] = [
    "seq",
    "time_unix_nanos",
    "invocation_id",
    "turn_id",
    "tool",
    "tool_version",
    "params",
    "params_sha256",
    "decision",
    "refusal_code",
    "output_sha256",
    "tainted",
    "scrubbed",
    "prev_hash",
    "hash",
    "signature",
];

struct Fixture {
    _home: tempfile::TempDir,
    ledger_dir: PathBuf,
    key: LedgerPublicKey,
}

fn fixture() -> &'static Fixture {
    static FIXTURE: OnceLock<Fixture> = OnceLock::new();
    FIXTURE.get_or_init(|| {
        let home = tempfile::tempdir().unwrap();
        let ledger = Ledger::open(home.path()).unwrap();
        for i in 0..4u8 {
            ledger
                .append(Entry {
                    invocation_id: format!("inv-{i}"),
                    turn_id: (i % 2 == 0).then(|| "turn".to_owned()),
                    tool: "files.read".to_owned(),
                    tool_version: "1".to_owned(),
                    params: serde_json::json!({"path": format!("/p/{i}"), "n": i}),
                    decision: if i == 2 {
                        Decision::Refused {
                            code: "policy_denied".to_owned(),
                        }
                    } else {
                        Decision::Admitted
                    },
                    output_sha256: (i != 2).then(|| Sha256Digest::of(&[i])),
                    tainted: i % 2 == 1,
                    scrubbed: if i == 3 {
                        vec!["aws".to_owned()]
                    } else {
                        Vec::new()
                    },
                })
                .unwrap();
        }
        let key = ledger.public_key();
        ledger.close().unwrap();
        Fixture {
            ledger_dir: home.path().join("ledger"),
            _home: home,
            key,
        }
    })
}

fuzz_target!(|data: &[u8]| {
    let [row, column, kind, value @ ..] = data else {
        return;
    };
    let seq = i64::from(row % 4) + 1;
    let column = COLUMNS[usize::from(*column) % COLUMNS.len()];
    let new_value = match kind % 4 {
        0 => Value::Null,
        1 => Value::Integer(i64::from_le_bytes(
            value
                .iter()
                .copied()
                .chain([0; 8])
                .take(8)
                .collect::<Vec<_>>()
                .try_into()
                .unwrap(),
        )),
        2 => Value::Text(String::from_utf8_lossy(value).into_owned()),
        _ => Value::Blob(value.to_vec()),
    };
    let f = fixture();
    let copy = tempfile::tempdir().unwrap();
    for name in ["ledger.sqlite", "head"] {
        std::fs::copy(f.ledger_dir.join(name), copy.path().join(name)).unwrap();
    }
    let db = rusqlite::Connection::open(copy.path().join("ledger.sqlite")).unwrap();
    let old: Value = db
        .query_row(
            &format!("SELECT {column} FROM records WHERE seq = ?1"),
            [seq],
            |r| r.get(0),
        )
        .unwrap();
    if old == new_value {
        return;
    }
    // The table is STRICT: a value of the wrong type is refused, like a
    // duplicate seq; then nothing changed and there is nothing to detect.
    let update = format!("UPDATE records SET {column} = ?1 WHERE seq = ?2");
    if db
        .execute(&update, rusqlite::params![new_value, seq])
        .is_err()
    {
        return;
    }
    drop(db);
    match LedgerReader::open_dir(copy.path()).unwrap().verify(&f.key) {
        Err(VerifyError::Failed(_)) => {}
        Ok(report) => panic!("{column} of seq {seq} := {new_value:?} went unnoticed: {report:?}"),
        Err(VerifyError::Ledger(e)) => panic!("verify could not read a tampered copy: {e}"),
    }
});
