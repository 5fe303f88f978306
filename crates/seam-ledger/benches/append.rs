//! Durable appends: one caller (latency) and 32 concurrent callers (group
//! commit throughput), every record signed, under a durable head ceiling and
//! committed before `append` returns. Also what the two syncs on that path
//! cost on this disk by themselves (a head-slot `fdatasync`, a one-row
//! SQLite WAL commit), and full verification speed.
//!
//! Short runs: `cargo bench -p seam-ledger -- --warm-up-time 1 --measurement-time 3`.

use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use criterion::{Criterion, Throughput, criterion_group, criterion_main};
use seam_ledger::{Decision, Entry, Ledger, Sha256Digest};
use serde_json::json;

/// A typical governed call: a `files.read` with a path, admitted, tainted.
fn entry(i: u64) -> Entry {
    Entry {
        invocation_id: format!("01J{i:023}"),
        turn_id: Some(format!("turn-{}", i / 8)),
        tool: "files.read".to_owned(),
        tool_version: "1".to_owned(),
        params: json!({"path": format!("/home/owner/projects/seam/notes/{i}.md"), "max_bytes": 65536}),
        decision: Decision::Admitted,
        output_sha256: Some(Sha256Digest::of(&i.to_be_bytes())),
        tainted: true,
        scrubbed: Vec::new(),
    }
}

const CALLERS: u64 = 32;
const PER_CALLER: u64 = 64;

fn append(c: &mut Criterion) {
    let home = tempfile::tempdir().expect("tempdir");
    let ledger = Ledger::open(home.path()).expect("open ledger");
    let next = AtomicU64::new(0);
    let mut group = c.benchmark_group("append");
    group.throughput(Throughput::Elements(1));

    group.bench_function("single_caller", |b| {
        b.iter(|| {
            ledger
                .append(entry(next.fetch_add(1, Ordering::Relaxed)))
                .expect("append")
        })
    });

    // One iteration: 32 threads call `append` at once, 64 times each; the
    // throughput is in appended records per second.
    group.throughput(Throughput::Elements(CALLERS * PER_CALLER));
    group.sample_size(20);
    group.bench_function("32_callers", |b| {
        b.iter(|| {
            std::thread::scope(|s| {
                for _ in 0..CALLERS {
                    s.spawn(|| {
                        for _ in 0..PER_CALLER {
                            ledger
                                .append(entry(next.fetch_add(1, Ordering::Relaxed)))
                                .expect("append");
                        }
                    });
                }
            })
        })
    });
    group.finish();
    ledger.close().expect("close ledger");
}

/// The floor under `single_caller`: the two syncs it waits for, in series.
fn sync_floor(c: &mut Criterion) {
    use std::os::unix::fs::FileExt;
    let dir = tempfile::tempdir().expect("tempdir");
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create_new(true)
        .open(dir.path().join("slots"))
        .expect("slot file");
    file.write_all_at(&[0u8; 8192], 0).expect("write");
    file.sync_all().expect("sync");
    let db = rusqlite::Connection::open(dir.path().join("db.sqlite")).expect("db");
    db.pragma_update(None, "journal_mode", "WAL").expect("wal");
    db.execute_batch(
        "PRAGMA synchronous = FULL; CREATE TABLE t (seq INTEGER PRIMARY KEY, body BLOB);",
    )
    .expect("schema");
    let mut group = c.benchmark_group("sync_floor");
    let mut n = 0u64;
    group.bench_function("slot_pwrite_fdatasync", |b| {
        b.iter(|| {
            n += 1;
            file.write_all_at(&[n as u8; 208], (n % 2) * 4096)
                .expect("write");
            file.sync_data().expect("fdatasync");
        })
    });
    group.bench_function("sqlite_commit_one_row", |b| {
        b.iter(|| {
            db.execute("INSERT INTO t (body) VALUES (?1)", [vec![7u8; 400]])
                .expect("insert")
        })
    });
    group.finish();
}

fn verify(c: &mut Criterion) {
    const RECORDS: u64 = 10_000;
    let home = tempfile::tempdir().expect("tempdir");
    let ledger = Ledger::open(home.path()).expect("open ledger");
    std::thread::scope(|s| {
        for t in 0..CALLERS {
            let ledger = &ledger;
            s.spawn(move || {
                for i in 0..RECORDS / CALLERS {
                    ledger.append(entry(t * RECORDS + i)).expect("append");
                }
            });
        }
    });
    ledger.close().expect("close ledger");
    let mut group = c.benchmark_group("verify");
    group.throughput(Throughput::Elements(RECORDS / CALLERS * CALLERS));
    group.sample_size(10);
    group.bench_function("10k_records", |b| {
        b.iter(|| seam_ledger::verify(home.path(), None).expect("verifies"))
    });
    group.finish();
}

criterion_group! {
    name = benches;
    config = Criterion::default().warm_up_time(Duration::from_secs(1)).measurement_time(Duration::from_secs(3));
    targets = append, sync_floor, verify
}
criterion_main!(benches);
