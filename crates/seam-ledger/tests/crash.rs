//! A child process appends from many threads and is killed with SIGKILL.
//! Every append whose return the parent saw must be in the ledger, and the
//! ledger must verify (after the owner's next open re-signs a lagging head).

mod common;

use std::collections::BTreeMap;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::failure;
use seam_ledger::{FailureKind, LedgerReader, repair_head, verify};

/// The example binary cargo builds next to this test's `deps/` directory.
fn child_binary() -> PathBuf {
    let exe = std::env::current_exe().unwrap();
    let dir = exe.parent().unwrap().parent().unwrap();
    let path = dir.join("examples").join("ledger_crash_child");
    assert!(
        path.exists(),
        "{} is missing: run the tests with `cargo test -p seam-ledger` so examples are built",
        path.display()
    );
    path
}

/// Runs the child until it has reported `at_least` appends (or 20 s), kills
/// it, and returns every (seq, invocation id) it reported.
fn run_and_kill(home: &std::path::Path, threads: usize, at_least: usize) -> BTreeMap<u64, String> {
    let mut child = Command::new(child_binary())
        .arg(home)
        .arg(threads.to_string())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    let mut seen = BTreeMap::new();
    let started = Instant::now();
    while seen.len() < at_least && started.elapsed() < Duration::from_secs(20) {
        let Some(Ok(line)) = lines.next() else { break };
        let (seq, id) = line.split_once(' ').unwrap();
        seen.insert(seq.parse::<u64>().unwrap(), id.to_owned());
    }
    child.kill().unwrap(); // SIGKILL
    child.wait().unwrap();
    // Lines written before the kill are still in the pipe: those appends returned too.
    for line in lines {
        let Ok(line) = line else { break };
        if let Some((seq, id)) = line.split_once(' ')
            && let Ok(seq) = seq.parse::<u64>()
        {
            seen.insert(seq, id.to_owned());
        }
    }
    assert!(!seen.is_empty(), "the child appended nothing");
    seen
}

#[test]
fn sigkill_loses_no_append_whose_return_was_seen() {
    let home = tempfile::tempdir().unwrap();
    let mut observed = BTreeMap::new();
    for round in 0..2 {
        let seen = run_and_kill(home.path(), 16, 400 + round * 200);
        for (seq, id) in &seen {
            assert!(
                observed.insert(*seq, id.clone()).is_none(),
                "seq {seq} reported twice"
            );
        }
        // Before any repair: the records all check out; only the head may lag
        // (the child died between a commit and the head write that follows it).
        match verify(home.path(), None) {
            Ok(_) => {}
            Err(e) => {
                let f = failure(Err(e));
                assert_eq!(f.kind, FailureKind::HeadBehind, "{f}");
            }
        }
        // The owner's next open re-signs the head after checking the tail.
        let repaired = repair_head(home.path()).unwrap();
        let report = verify(home.path(), None).unwrap();
        if let Some(r) = repaired {
            assert_eq!(r.to_seq, report.records);
        }

        let stored: BTreeMap<u64, String> = LedgerReader::open(home.path())
            .unwrap()
            .records_after(0, usize::MAX)
            .unwrap()
            .into_iter()
            .map(|r| (r.seq, r.entry.invocation_id))
            .collect();
        assert_eq!(stored.len() as u64, report.records);
        for (seq, id) in &observed {
            assert_eq!(
                stored.get(seq),
                Some(id),
                "append {id} (seq {seq}) was lost"
            );
        }
    }
}
