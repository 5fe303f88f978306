//! `seam queue` and `seam watch --once` on real git repositories, with items
//! staged by seam-local's tools as the agent stages them.

mod common;

use common::Owner;
use seam_local::{LocalConfig, LocalTools, TurnInfo};
use seam_test_support::git::git;
use serde_json::{Value, json};

/// The owner's workspace as a git repository on main, and one builder turn
/// writing `path` staged in the queue; returns the item's id.
fn staged(o: &Owner, turn: &str, path: &str, content: &str) -> i64 {
    if !o.workspace.join(".git").exists() {
        git(&o.workspace, &["init", "-q", "-b", "main"]);
        std::fs::write(o.workspace.join("README.md"), "hi\n").unwrap();
        git(&o.workspace, &["add", "-A"]);
        git(&o.workspace, &["commit", "-q", "-m", "first"]);
    }
    let mut config = LocalConfig::new(&o.seam_home);
    config.repo = Some(o.workspace.clone());
    let tools = LocalTools::open(config).unwrap();
    let t = TurnInfo {
        turn: turn.into(),
        ..TurnInfo::default()
    };
    let p = json!({"op": "write", "path": path, "content": content});
    tools.call(&t, "builder", p.as_object().unwrap()).unwrap();
    tools.finish_turn(&t).unwrap()[0].id
}

#[test]
fn an_empty_queue_lists_nothing() {
    let o = Owner::new();
    o.seam()
        .args(["queue", "list"])
        .assert()
        .success()
        .stdout("");
    let out = o.seam().args(["queue", "list", "--json"]).output().unwrap();
    assert_eq!(
        serde_json::from_slice::<Value>(&out.stdout).unwrap(),
        json!([])
    );
    o.seam().args(["queue", "approve", "1"]).assert().code(2);
}

#[test]
fn list_show_approve_and_the_errors_around_them() {
    let o = Owner::new();
    let id = staged(&o, "t1", "src/colour.txt", "red \u{1b}[31mRED\u{1b}[0m\n");
    let out = o.seam().args(["queue", "list", "--json"]).output().unwrap();
    assert!(out.status.success());
    let items: Value = serde_json::from_slice(&out.stdout).unwrap();
    let item = &items[0];
    assert_eq!(item["id"], id);
    assert_eq!(item["kind"], "branch");
    assert_eq!(item["status"], "pending");
    assert!(item["summary"].as_str().unwrap().contains("src/colour.txt"));
    let out = o.seam().args(["queue", "list"]).output().unwrap();
    assert!(String::from_utf8_lossy(&out.stdout).contains(&format!("#{id}")));

    let out = o
        .seam()
        .args(["queue", "show", &id.to_string()])
        .output()
        .unwrap();
    assert!(out.status.success());
    let shown = String::from_utf8(out.stdout).unwrap();
    assert!(shown.contains("+red"), "{shown}");
    assert!(
        !shown.contains('\u{1b}'),
        "escapes from the diff are shown, not obeyed"
    );
    assert!(shown.contains("\\x1b[31m"), "{shown}");

    let main_before = git(&o.workspace, &["rev-parse", "main"]);
    o.seam()
        .args(["queue", "approve", &id.to_string()])
        .assert()
        .success();
    assert_ne!(git(&o.workspace, &["rev-parse", "main"]), main_before);
    assert!(o.workspace.join("src/colour.txt").exists());
    let out = o
        .seam()
        .args(["queue", "approve", &id.to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("already approved"));
    let out = o
        .seam()
        .args(["queue", "reject", &id.to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let out = o.seam().args(["queue", "show", "4242"]).output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no queue item has id 4242"));
}

#[test]
fn reject_and_a_moved_target() {
    let o = Owner::new();
    let first = staged(&o, "t2", "a.txt", "a\n");
    let second = staged(&o, "t3", "b.txt", "b\n");
    o.seam()
        .args(["queue", "reject", &first.to_string()])
        .assert()
        .success();
    let branches = git(&o.workspace, &["branch", "--list", "seam/*"]);
    assert!(!branches.contains("seam/t2-1"), "{branches}");
    // The operator commits on main: the second item can no longer fast-forward.
    std::fs::write(o.workspace.join("c.txt"), "c\n").unwrap();
    git(&o.workspace, &["add", "c.txt"]);
    git(&o.workspace, &["commit", "-q", "-m", "mine"]);
    let out = o
        .seam()
        .args(["queue", "approve", &second.to_string()])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    assert!(String::from_utf8_lossy(&out.stderr).contains("moved"));
    assert!(!o.workspace.join("b.txt").exists());
}

#[test]
fn watch_once_prints_one_line_per_item() {
    let o = Owner::new();
    let id = staged(&o, "w1", "a.txt", "a\n");
    let out = o.seam().args(["watch", "--once"]).output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    assert!(
        text.lines()
            .any(|l| l.starts_with(&format!("queue #{id}")) && l.contains("pending")),
        "{text}"
    );
}
