//! The builder, the Critic and the queue on real git repositories.

mod common;

use common::{Fixture, git, params, turn};
use seam_local::{LocalTools, QueueError, ReturnQueue, Staged, Status, Verdict};
use seam_protocol::RefusalCode;
use serde_json::json;

#[test]
fn a_change_lands_on_its_branch_and_main_is_untouched() {
    let f = Fixture::new();
    let tools = f.tools();
    let main_before = f.head("main");
    let t = turn("t1");
    let out = tools
        .call(
            &t,
            "builder",
            &params(json!({"op": "write", "path": "src/new.rs", "content": "pub fn two() {}\n"})),
        )
        .unwrap();
    assert_eq!(out["branch"], "seam/t1-1");
    assert_eq!(out["changed"], true);
    tools
        .call(
            &t,
            "builder",
            &params(json!({"op": "delete", "path": "README.md", "message": "drop readme"})),
        )
        .unwrap();
    let (branch, worktree) = tools.turn_branch("t1").unwrap();
    assert_eq!(branch, "seam/t1-1");
    assert!(worktree.starts_with(f.layout().worktrees()));
    assert_eq!(
        std::fs::read_to_string(worktree.join("src/new.rs")).unwrap(),
        "pub fn two() {}\n"
    );
    assert!(!worktree.join("README.md").exists());
    // main, its working tree and its index are as they were.
    assert_eq!(f.head("main"), main_before);
    assert!(!f.repo().join("src/new.rs").exists());
    assert!(f.repo().join("README.md").exists());
    assert_eq!(git(&f.repo(), &["status", "--porcelain"]), "");
    // Two commits on the branch, by the builder, in the staging repository;
    // the operator's repository holds no seam branch.
    let staging = f.staging();
    assert!(staging.starts_with(f.layout().staged_repos()));
    assert_eq!(
        git(
            &staging,
            &["rev-list", "--count", &format!("{main_before}..seam/t1-1")]
        ),
        "2"
    );
    assert_eq!(
        git(&staging, &["log", "-1", "--format=%s", "seam/t1-1"]),
        "drop readme"
    );
    assert_eq!(f.branches(), vec!["main".to_owned()]);
    let items = tools.finish_turn(&t).unwrap();
    assert_eq!(items.len(), 1);
    assert_eq!(items[0].kind, "branch");
    assert_eq!(items[0].status, Status::Pending);
    assert_eq!(items[0].verdict, Verdict::Pass, "{}", items[0].critic);
    assert!(items[0].preview.contains("+pub fn two() {}"));
    assert_eq!(f.head("main"), main_before);
}

#[test]
fn approve_fast_forwards_the_target_and_cleans_up() {
    let f = Fixture::new();
    let tools = f.tools();
    let t = turn("t2");
    tools
        .call(&t, "builder", &params(json!({"op": "write", "path": "src/lib.rs", "content": "pub fn one() -> u32 {\n    2\n}\n"})))
        .unwrap();
    let (_, worktree) = tools.turn_branch("t2").unwrap();
    let tip = f.staged("seam/t2-1");
    let item = tools.finish_turn(&t).unwrap().remove(0);
    let mut q = ReturnQueue::open(&f.home()).unwrap();
    let d = q.approve(item.id).unwrap();
    assert_eq!(d.status, Status::Approved);
    assert_eq!(f.head("main"), tip, "main fast-forwarded to the branch");
    // The operator's working tree follows (main is checked out there).
    assert!(
        std::fs::read_to_string(f.repo().join("src/lib.rs"))
            .unwrap()
            .contains("    2")
    );
    assert_eq!(git(&f.repo(), &["status", "--porcelain"]), "");
    assert!(!f.branches().iter().any(|b| b.starts_with("seam/")));
    assert!(!worktree.exists());
    assert_eq!(q.get(item.id).unwrap().unwrap().status, Status::Approved);
    // A decision is final; a missing id is named.
    assert!(matches!(
        q.approve(item.id),
        Err(QueueError::AlreadyDecided {
            status: Status::Approved,
            ..
        })
    ));
    assert!(matches!(
        q.reject(item.id),
        Err(QueueError::AlreadyDecided { .. })
    ));
    assert!(matches!(q.approve(9999), Err(QueueError::NotFound(9999))));
}

#[test]
fn approve_into_a_target_not_checked_out_moves_only_the_ref() {
    let f = Fixture::new();
    let tools = f.tools();
    let t = turn("t-side");
    tools
        .call(
            &t,
            "builder",
            &params(json!({"op": "write", "path": "x.txt", "content": "x\n"})),
        )
        .unwrap();
    let tip = f.staged("seam/t-side-1");
    let item = tools.finish_turn(&t).unwrap().remove(0);
    // The operator switched away from main before approving.
    git(&f.repo(), &["switch", "-q", "-c", "other"]);
    ReturnQueue::open(&f.home())
        .unwrap()
        .approve(item.id)
        .unwrap();
    assert_eq!(f.head("main"), tip);
    assert!(
        !f.repo().join("x.txt").exists(),
        "the checked-out branch is untouched"
    );
}

#[test]
fn reject_leaves_no_branch_and_no_worktree() {
    let f = Fixture::new();
    let tools = f.tools();
    let t = turn("t3");
    let main_before = f.head("main");
    tools
        .call(
            &t,
            "builder",
            &params(json!({"op": "write", "path": "a.txt", "content": "a\n"})),
        )
        .unwrap();
    let (_, worktree) = tools.turn_branch("t3").unwrap();
    let item = tools.finish_turn(&t).unwrap().remove(0);
    let mut q = ReturnQueue::open(&f.home()).unwrap();
    q.reject(item.id).unwrap();
    assert!(!worktree.exists());
    assert_eq!(f.branches(), vec!["main".to_owned()]);
    assert_eq!(
        git(&f.repo(), &["worktree", "list", "--porcelain"])
            .matches("worktree ")
            .count(),
        1
    );
    assert_eq!(f.head("main"), main_before);
    assert!(matches!(
        q.approve(item.id),
        Err(QueueError::AlreadyDecided {
            status: Status::Rejected,
            ..
        })
    ));
}

#[test]
fn approve_is_refused_when_the_target_moved() {
    let f = Fixture::new();
    let tools = f.tools();
    let t = turn("t4");
    tools
        .call(
            &t,
            "builder",
            &params(json!({"op": "write", "path": "a.txt", "content": "a\n"})),
        )
        .unwrap();
    let item = tools.finish_turn(&t).unwrap().remove(0);
    std::fs::write(f.repo().join("b.txt"), "b\n").unwrap();
    git(&f.repo(), &["add", "b.txt"]);
    git(&f.repo(), &["commit", "-q", "-m", "operator moved on"]);
    let moved = f.head("main");
    let mut q = ReturnQueue::open(&f.home()).unwrap();
    let e = q.approve(item.id).unwrap_err();
    assert!(matches!(e, QueueError::TargetMoved { .. }), "{e}");
    assert!(e.to_string().contains("moved"), "{e}");
    assert_eq!(f.head("main"), moved);
    assert_eq!(q.get(item.id).unwrap().unwrap().status, Status::Pending);
    // Rejecting it still works.
    q.reject(item.id).unwrap();
}

#[test]
fn a_turn_that_commits_nothing_leaves_nothing() {
    let f = Fixture::new();
    let tools = f.tools();
    let t = turn("t5");
    let out = tools
        .call(
            &t,
            "builder",
            &params(json!({"op": "write", "path": "README.md", "content": "hello\n"})),
        )
        .unwrap();
    assert_eq!(out["changed"], false);
    let (_, worktree) = tools.turn_branch("t5").unwrap();
    assert!(tools.finish_turn(&t).unwrap().is_empty());
    assert!(!worktree.exists());
    assert_eq!(f.branches(), vec!["main".to_owned()]);
}

#[test]
fn patch_applies_a_unified_diff() {
    let f = Fixture::new();
    let tools = f.tools();
    let t = turn("t6");
    let diff = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n pub fn one() -> u32 {\n-    1\n+    3\n }\n";
    let out = tools
        .call(&t, "builder", &params(json!({"op": "patch", "diff": diff})))
        .unwrap();
    assert_eq!(out["files"], json!(["src/lib.rs"]));
    let (_, wt) = tools.turn_branch("t6").unwrap();
    assert!(
        std::fs::read_to_string(wt.join("src/lib.rs"))
            .unwrap()
            .contains("    3")
    );
    let bad = "--- a/src/lib.rs\n+++ b/src/lib.rs\n@@ -1,3 +1,3 @@\n pub fn nothing() {\n-    9\n+    3\n }\n";
    let e = tools
        .call(&t, "builder", &params(json!({"op": "patch", "diff": bad})))
        .unwrap_err();
    assert_eq!(e.code, RefusalCode::Failed);
    assert!(e.message.contains("does not apply"), "{e}");
    assert_eq!(
        git(&wt, &["status", "--porcelain"]),
        "",
        "a failed patch leaves the worktree clean"
    );
}

fn critic_item(f: &Fixture, tools: &LocalTools, id: &str) -> seam_local::QueueItem {
    let items = tools.finish_turn(&turn(id)).unwrap();
    assert_eq!(items.len(), 1);
    let _ = f;
    items.into_iter().next().unwrap()
}

#[test]
fn the_critic_fails_a_change_that_fails_the_check() {
    let f = Fixture::new();
    let mut config = f.config();
    config.check = Some(vec![
        "sh".into(),
        "-c".into(),
        "test ! -e broken.txt || { echo broken here; exit 7; }".into(),
    ]);
    let tools = LocalTools::open(config).unwrap();
    let t = turn("c1");
    tools
        .call(
            &t,
            "builder",
            &params(json!({"op": "write", "path": "broken.txt", "content": "x\n"})),
        )
        .unwrap();
    let out = tools
        .call(&t, "builder", &params(json!({"op": "check"})))
        .unwrap();
    assert_eq!(out["passed"], false);
    assert!(out["output"].as_str().unwrap().contains("broken here"));
    let item = critic_item(&f, &tools, "c1");
    assert_eq!(item.verdict, Verdict::Fail);
    assert!(item.critic.contains("failed (exit 7)"), "{}", item.critic);
    let mut q = ReturnQueue::open(&f.home()).unwrap();
    let main_before = f.head("main");
    assert!(matches!(
        q.approve(item.id),
        Err(QueueError::CriticRejected { .. })
    ));
    assert_eq!(f.head("main"), main_before);
    // The verdict is in the agent's build records, where memory.build reads
    // it; nothing of the agent's is in the gate's memory.
    let memory = seam_memory::MemoryHome::new(&f.home());
    assert_eq!(memory.agent_builds_path(), f.layout().agent_build_records());
    assert!(!memory.builds_path().exists());
    let builds = memory.agent_builds().unwrap();
    let runs = builds.all_summaries(10).unwrap().runs;
    assert!(
        runs.iter().any(|r| r.kind == "critic"
            && r.summary.starts_with("fail:")
            && r.summary.contains("exit 7")),
        "{runs:?}"
    );
    assert!(runs.iter().any(|r| r.kind == "build"));
}

#[test]
fn the_critic_passes_a_change_that_passes_the_check() {
    let f = Fixture::new();
    let mut config = f.config();
    config.check = Some(vec!["sh".into(), "-c".into(), "test -e ok.txt".into()]);
    let tools = LocalTools::open(config).unwrap();
    let t = turn("c2");
    tools
        .call(
            &t,
            "builder",
            &params(json!({"op": "write", "path": "ok.txt", "content": "x\n"})),
        )
        .unwrap();
    let item = critic_item(&f, &tools, "c2");
    assert_eq!(item.verdict, Verdict::Pass, "{}", item.critic);
    assert!(item.critic.contains("passed"));
}

#[test]
fn the_critic_fails_a_check_that_runs_too_long() {
    let f = Fixture::new();
    let mut config = f.config();
    config.check = Some(vec!["sleep".into(), "30".into()]);
    config.check_timeout = std::time::Duration::from_millis(300);
    let tools = LocalTools::open(config).unwrap();
    let t = turn("c3");
    tools
        .call(
            &t,
            "builder",
            &params(json!({"op": "write", "path": "a.txt", "content": "x\n"})),
        )
        .unwrap();
    let started = std::time::Instant::now();
    let item = critic_item(&f, &tools, "c3");
    assert!(started.elapsed() < std::time::Duration::from_secs(10));
    assert_eq!(item.verdict, Verdict::Fail);
    assert!(item.critic.contains("timed out"), "{}", item.critic);
}

#[test]
fn the_critic_fails_a_change_to_a_protected_path() {
    // The builder refuses the path itself; a commit made in the worktree by
    // other means still meets the Critic.
    let f = Fixture::new();
    let tools = f.tools();
    let t = turn("c4");
    let e = tools
        .call(
            &t,
            "builder",
            &params(json!({"op": "write", "path": ".github/workflows/ci.yml", "content": "x"})),
        )
        .unwrap_err();
    assert_eq!(e.code, RefusalCode::NotAllowed);
    tools
        .call(
            &t,
            "builder",
            &params(json!({"op": "write", "path": "a.txt", "content": "a\n"})),
        )
        .unwrap();
    let (_, wt) = tools.turn_branch("c4").unwrap();
    std::fs::create_dir_all(wt.join("deploy/.ssh")).unwrap();
    std::fs::write(
        wt.join("deploy/.ssh/authorized_keys"),
        "ssh-ed25519 AAAA x\n",
    )
    .unwrap();
    git(&wt, &["add", "-A"]);
    git(&wt, &["commit", "-q", "-m", "sneak"]);
    let item = critic_item(&f, &tools, "c4");
    assert_eq!(item.verdict, Verdict::Fail);
    assert!(
        item.critic
            .contains("deploy/.ssh/authorized_keys is protected"),
        "{}",
        item.critic
    );
}

#[test]
fn the_critic_fails_a_diff_holding_a_key() {
    let pem = "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEA3Tz2mr7SZiAMfQyuvBjM9Oi8yXqyWyFhZ3ZLQ0jzgeKdS7Gv\nYgHc1kLrE9oBi6Rr3rXo0dUZbN9Qy8z8NAt6b3M1RKrWjTBHo7d4dHpVnO6qZJ9k\n-----END RSA PRIVATE KEY-----\n";
    let aws = "AWS_ACCESS_KEY_ID=AKIAZ4X7QW3RT5YU8IOP\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9Tk2Lm8N\n";
    for (name, content, shape) in [("pem", pem, "pem-private-key"), ("aws", aws, "aws")] {
        let f = Fixture::new();
        let tools = f.tools();
        let t = turn(name);
        tools
            .call(
                &t,
                "builder",
                &params(json!({"op": "write", "path": "config/settings.txt", "content": content})),
            )
            .unwrap();
        let item = critic_item(&f, &tools, name);
        assert_eq!(item.verdict, Verdict::Fail, "{name}");
        assert!(
            item.critic.contains("secret") && item.critic.contains(shape),
            "{name}: {}",
            item.critic
        );
        // Neither the preview nor the Critic's words hold the key.
        assert!(
            !item.preview.contains("MIIEowIBAAKCAQEA3Tz2"),
            "{}",
            item.preview
        );
        assert!(!item.preview.contains("wJalrXUtnFEMI"), "{}", item.preview);
        let mut q = ReturnQueue::open(&f.home()).unwrap();
        assert!(matches!(
            q.approve(item.id),
            Err(QueueError::CriticRejected { .. })
        ));
    }
}

#[test]
fn queue_list_and_show() {
    let f = Fixture::new();
    let tools = f.tools();
    let t = turn("q1");
    tools
        .call(
            &t,
            "builder",
            &params(json!({"op": "write", "path": "a.txt", "content": "a\n"})),
        )
        .unwrap();
    tools
        .call(
            &t,
            "scribe",
            &params(json!({"text": "The [[parser]] repairs fences.", "title": "parser repair"})),
        )
        .unwrap();
    let items = tools.finish_turn(&t).unwrap();
    assert_eq!(items.len(), 2);
    let q = ReturnQueue::open(&f.home()).unwrap();
    let list = q.list(50).unwrap();
    assert_eq!(list.len(), 2);
    assert!(
        list.iter().all(|i| i.preview.is_empty()),
        "lists carry no previews"
    );
    let v = serde_json::to_value(&list).unwrap();
    for item in v.as_array().unwrap() {
        for key in ["id", "kind", "status", "summary"] {
            assert!(item.get(key).is_some(), "{key} missing in {item}");
        }
    }
    let shown = q.get(items[0].id).unwrap().unwrap();
    assert!(shown.preview.contains("+a"));
    assert!(matches!(shown.staged, Staged::Branch { .. }));
}
