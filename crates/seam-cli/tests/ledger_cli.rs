//! `seam ledger …` over the ledger that `seam invoke` writes.

mod common;

use std::io::{BufRead, BufReader};
use std::process::Stdio;

use common::Owner;

fn invoke_n(o: &Owner, n: usize) {
    o.write("project/a.txt", b"hello\n");
    for _ in 0..n {
        o.seam()
            .args(["invoke", "files.read", r#"{"path":"a.txt"}"#])
            .assert()
            .success();
    }
}

fn verify(o: &Owner, extra: &[&str]) -> (i32, String) {
    let out = o
        .seam()
        .args(["ledger", "verify"])
        .args(extra)
        .output()
        .unwrap();
    (
        out.status.code().unwrap(),
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr),
    )
}

#[test]
fn every_invoke_is_recorded_and_verifies() {
    let o = Owner::new();
    invoke_n(&o, 3);
    // a refused call is recorded too
    o.seam()
        .args(["invoke", "files.read", r#"{"path":"/etc/passwd"}"#])
        .assert()
        .code(3);
    let (code, text) = verify(&o, &[]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("4 records"), "{text}");

    let out = o
        .seam()
        .args(["ledger", "export", "--json"])
        .output()
        .unwrap();
    let lines: Vec<serde_json::Value> = out
        .stdout
        .lines()
        .map(|l| serde_json::from_str(&l.unwrap()).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[0]["tool"], "files.read");
    assert_eq!(lines[0]["decision"]["kind"], "admitted");
    assert_eq!(lines[3]["decision"]["code"], "not_allowed");
    assert_eq!(lines[1]["prev_hash"], lines[0]["hash"]);
}

#[test]
fn a_rolled_back_head_file_fails_verification_with_exit_4() {
    let o = Owner::new();
    invoke_n(&o, 1);
    let head = o.layout().ledger().join("head");
    let old = std::fs::read(&head).unwrap();
    invoke_n(&o, 2);
    std::fs::write(&head, old).unwrap();
    let (code, text) = verify(&o, &[]);
    assert_eq!(code, 4, "{text}");
    assert!(text.contains("FAILED at seq"), "{text}");
}

#[test]
fn verify_with_another_public_key_fails() {
    let o = Owner::new();
    invoke_n(&o, 2);
    let pubkey = o.seam().args(["ledger", "pubkey"]).output().unwrap();
    let pubkey = String::from_utf8(pubkey.stdout).unwrap();
    assert_eq!(pubkey.trim().len(), 64);
    let (code, text) = verify(&o, &["--pubkey", pubkey.trim()]);
    assert_eq!(code, 0, "{text}");

    let other = Owner::new();
    invoke_n(&other, 1);
    let other_key = other.seam().args(["ledger", "pubkey"]).output().unwrap();
    let other_key = String::from_utf8(other_key.stdout).unwrap();
    let (code, text) = verify(&o, &["--pubkey", other_key.trim()]);
    assert_eq!(code, 4, "{text}");

    let (code, _) = verify(&o, &["--pubkey", "not-a-key"]);
    assert_eq!(code, 2);
}

#[test]
fn tail_prints_one_filtered_line_per_record() {
    let o = Owner::new();
    invoke_n(&o, 2);
    o.seam()
        .args([
            "invoke",
            "files.read",
            "{\"path\":\"x\\u001b[2J\\nfake line\"}",
        ])
        .assert()
        .code(3);
    let out = o
        .seam()
        .args(["ledger", "tail", "-n", "2"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8(out.stdout).unwrap();
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(!text.contains('\u{1b}'), "{text}");
    assert!(text.lines().last().unwrap().contains("refused:"), "{text}");
}

#[test]
fn a_killed_gate_loses_no_answered_call() {
    let o = Owner::new();
    o.write("project/a.txt", b"cheap\n");
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("seam"))
        .env_clear()
        .env("HOME", &o.home)
        .env("SEAM_HOME", &o.seam_home)
        .current_dir(&o.workspace)
        .args([
            "__invoke-loop",
            "files.read",
            r#"{"path":"a.txt"}"#,
            "--threads",
            "16",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut answered = Vec::new();
    let mut lines = BufReader::new(child.stdout.take().unwrap()).lines();
    while answered.len() < 300 {
        match lines.next() {
            Some(Ok(id)) => answered.push(id),
            other => panic!("child ended early: {other:?}"),
        }
    }
    // SIGKILL: no destructor, no flush, no chance to tidy up.
    child.kill().unwrap();
    for line in lines.map_while(Result::ok) {
        answered.push(line);
    }
    child.wait().unwrap();

    let (code, text) = verify(&o, &[]);
    assert_eq!(code, 0, "{text}");
    let out = o
        .seam()
        .args(["ledger", "export", "--json"])
        .output()
        .unwrap();
    let recorded: std::collections::HashSet<String> = out
        .stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(&l.unwrap()).unwrap();
            v["invocation_id"].as_str().unwrap().to_owned()
        })
        .collect();
    for id in &answered {
        assert!(
            recorded.contains(id),
            "answered call {id} is missing from the ledger"
        );
    }
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}

#[test]
fn head_append_and_verify_against_catch_an_older_ledger_put_back() {
    let o = Owner::new();
    invoke_n(&o, 2);
    let ledger_dir = o.layout().ledger();
    let snapshot = o.dir.path().join("snapshot");
    copy_dir(&ledger_dir, &snapshot);
    invoke_n(&o, 3);

    let anchors = o.dir.path().join("anchors.jsonl");
    let out = o
        .seam()
        .args(["ledger", "head", "--append"])
        .arg(&anchors)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0), "{out:?}");
    let printed = String::from_utf8(out.stdout).unwrap();
    assert_eq!(printed.lines().count(), 1, "{printed}");
    let head: serde_json::Value = serde_json::from_str(printed.trim()).unwrap();
    assert_eq!(head["format"], "seam-ledger-anchor/v1");
    assert_eq!(head["floor"]["seq"], 5);
    assert_eq!(head["ceiling"]["seq"], 5);
    assert_eq!(head["signature"].as_str().unwrap().len(), 128);
    let pubkey = o.seam().args(["ledger", "pubkey"]).output().unwrap();
    assert_eq!(
        head["key"],
        String::from_utf8(pubkey.stdout).unwrap().trim()
    );
    assert_eq!(
        std::fs::read_to_string(&anchors).unwrap().trim(),
        printed.trim()
    );
    let anchors_arg = anchors.to_str().unwrap();
    let (code, text) = verify(&o, &["--against", anchors_arg]);
    assert_eq!(code, 0, "{text}");
    assert!(text.contains("not behind the anchor"), "{text}");

    // The ledger as it was at 2 records put back: the tail is gone and the head is older.
    std::fs::remove_dir_all(&ledger_dir).unwrap();
    copy_dir(&snapshot, &ledger_dir);
    let (code, text) = verify(&o, &[]);
    assert_eq!(
        code, 0,
        "plain verify cannot see a consistent rollback: {text}"
    );
    assert!(text.contains("2 records"), "{text}");
    let (code, text) = verify(&o, &["--against", anchors_arg]);
    assert_eq!(code, 4, "{text}");
    assert!(text.contains("FAILED at seq 3"), "{text}");
    assert!(text.contains(anchors_arg), "{text}");
    assert!(text.contains("up to seq 5"), "{text}");
    assert!(text.contains("ends at seq 2"), "{text}");

    // An anchor file that is not there is an error naming it.
    let missing = o.dir.path().join("no-such-anchors");
    let (code, text) = verify(&o, &["--against", missing.to_str().unwrap()]);
    assert_eq!(code, 1, "{text}");
    assert!(text.contains("no-such-anchors"), "{text}");
}
