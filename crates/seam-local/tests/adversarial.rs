//! The builder's walls: paths that try to leave the repository, links, git's
//! own files, protected names, malformed params, and seam's own source.

mod common;

use common::{Fixture, git, params, turn};
use seam_local::{LocalTools, ReturnQueue, Verdict};
use seam_policy::Decision;
use seam_protocol::RefusalCode;
use serde_json::json;

fn refused(tools: &LocalTools, t: &str, p: serde_json::Value) -> seam_local::LocalRefusal {
    tools.call(&turn(t), "builder", &params(p)).unwrap_err()
}

#[test]
fn paths_that_leave_the_repository_are_refused() {
    let f = Fixture::new();
    let tools = f.tools();
    for (path, code) in [
        ("../escape.txt", RefusalCode::InvalidPath),
        ("src/../../escape.txt", RefusalCode::InvalidPath),
        ("/tmp/escape.txt", RefusalCode::InvalidPath),
        ("~/escape.txt", RefusalCode::InvalidPath),
        (".git/hooks/pre-commit", RefusalCode::InvalidPath),
        ("sub/.Git/config", RefusalCode::InvalidPath),
        ("", RefusalCode::InvalidPath),
        ("src", RefusalCode::InvalidPath),
    ] {
        let e = refused(
            &tools,
            "p",
            json!({"op": "write", "path": path, "content": "x"}),
        );
        assert_eq!(e.code, code, "{path:?}: {e}");
    }
    assert!(!f.dir.path().join("escape.txt").exists());
    let e = refused(&tools, "p", json!({"op": "delete", "path": "src"}));
    assert_eq!(e.code, RefusalCode::InvalidPath, "{e}");
}

#[test]
fn links_in_the_repository_lead_nowhere() {
    let f = Fixture::new();
    let outside = f.links_out();
    let tools = f.tools();
    let e = refused(
        &tools,
        "l",
        json!({"op": "write", "path": "out/new.txt", "content": "x"}),
    );
    assert_eq!(e.code, RefusalCode::NotAllowed, "{e}");
    let e = refused(
        &tools,
        "l",
        json!({"op": "write", "path": "file-link", "content": "x"}),
    );
    assert_eq!(e.code, RefusalCode::NotAllowed, "{e}");
    let e = refused(
        &tools,
        "l",
        json!({"op": "delete", "path": "out/secret.txt"}),
    );
    assert_eq!(e.code, RefusalCode::NotAllowed, "{e}");
    let diff = "--- /dev/null\n+++ b/out/new.txt\n@@ -0,0 +1 @@\n+x\n";
    let e = refused(&tools, "l", json!({"op": "patch", "diff": diff}));
    assert_eq!(e.code, RefusalCode::Failed, "{e}");
    let diff = "--- a/file-link\n+++ b/file-link\n@@ -1 +1 @@\n-keep\n+gone\n";
    assert!(
        tools
            .call(
                &turn("l"),
                "builder",
                &params(json!({"op": "patch", "diff": diff}))
            )
            .is_err()
    );
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);
    assert_eq!(
        std::fs::read_to_string(outside.join("secret.txt")).unwrap(),
        "keep\n"
    );
}

#[test]
fn a_patch_cannot_make_a_link_or_leave() {
    let f = Fixture::new();
    let tools = f.tools();
    let link = "diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n@@ -0,0 +1 @@\n+/etc\n\\ No newline at end of file\n";
    let e = refused(&tools, "k", json!({"op": "patch", "diff": link}));
    assert_eq!(e.code, RefusalCode::NotAllowed, "{e}");
    let up = "--- /dev/null\n+++ b/../up.txt\n@@ -0,0 +1 @@\n+x\n";
    let e = refused(&tools, "k", json!({"op": "patch", "diff": up}));
    assert_eq!(e.code, RefusalCode::Failed, "{e}");
    assert!(!f.dir.path().join("up.txt").exists());
    let ci = "--- /dev/null\n+++ b/.github/workflows/x.yml\n@@ -0,0 +1 @@\n+on: push\n";
    let e = refused(&tools, "k", json!({"op": "patch", "diff": ci}));
    assert_eq!(e.code, RefusalCode::NotAllowed, "{e}");
    let (_, wt) = tools.turn_branch("k").unwrap();
    assert!(!wt.join(".github").exists(), "the refused patch was undone");
    assert_eq!(git(&wt, &["status", "--porcelain"]), "");
    let dotgit = "--- /dev/null\n+++ b/.git/hooks/post-commit\n@@ -0,0 +1 @@\n+x\n";
    assert!(
        tools
            .call(
                &turn("k"),
                "builder",
                &params(json!({"op": "patch", "diff": dotgit}))
            )
            .is_err()
    );
}

#[test]
fn protected_names_are_refused_at_the_call() {
    let f = Fixture::new();
    let tools = f.tools();
    for path in [
        ".github/workflows/ci.yml",
        "keys/server.pem",
        ".env",
        "home/.ssh/id_ed25519",
        "x/.aws/credentials",
    ] {
        let e = refused(
            &tools,
            "n",
            json!({"op": "write", "path": path, "content": "x"}),
        );
        assert_eq!(e.code, RefusalCode::NotAllowed, "{path}: {e}");
    }
    assert!(
        tools.turn_branch("n").is_none(),
        "no branch made for refused calls"
    );
}

#[test]
fn params_are_checked_against_the_schema() {
    let f = Fixture::new();
    let tools = f.tools();
    let t = turn("s");
    let e = tools
        .call(
            &t,
            "builder",
            &params(json!({"op": "write", "path": "a", "content": "x", "force": true})),
        )
        .unwrap_err();
    assert_eq!(e.code, RefusalCode::InvalidParams);
    assert!(e.message.contains("force"), "{e}");
    let e = tools
        .call(&t, "builder", &params(json!({"op": "rename"})))
        .unwrap_err();
    assert_eq!(e.code, RefusalCode::InvalidParams);
    assert!(e.message.contains("params.op"), "{e}");
    let e = tools
        .call(&t, "builder", &params(json!({"op": "write", "path": "a"})))
        .unwrap_err();
    assert_eq!(e.code, RefusalCode::InvalidParams);
    assert!(e.message.contains("params.content"), "{e}");
    let e = tools
        .call(&t, "builder", &params(json!({"path": "a"})))
        .unwrap_err();
    assert!(e.message.contains("op"), "{e}");
    let e = tools
        .call(&t, "graph", &params(json!({"op": "path", "node": "a"})))
        .unwrap_err();
    assert!(e.message.contains("params.to"), "{e}");
    let e = tools
        .call(&t, "files.read", &params(json!({})))
        .unwrap_err();
    assert_eq!(e.code, RefusalCode::UnknownTool);
}

#[test]
fn odd_turn_ids_make_safe_branch_names() {
    let f = Fixture::new();
    let tools = f.tools();
    let t = turn("../../x y:z");
    let out = tools
        .call(
            &t,
            "builder",
            &params(json!({"op": "write", "path": "a.txt", "content": "a"})),
        )
        .unwrap();
    assert_eq!(out["branch"], "seam/x-y-z-1");
    let (_, wt) = tools.turn_branch(&t.turn).unwrap();
    assert!(wt.starts_with(f.layout().worktrees()));
    // A second turn with the same id gets the next number.
    tools.finish_turn(&t).unwrap();
    let out = tools
        .call(
            &t,
            "builder",
            &params(json!({"op": "write", "path": "b.txt", "content": "b"})),
        )
        .unwrap();
    assert_eq!(out["branch"], "seam/x-y-z-2");
}

/// A repository that looks like seam's own source.
fn seam_like(f: &Fixture) {
    let r = f.repo();
    std::fs::write(r.join("Cargo.toml"), "[workspace]\nmembers = [\"crates/seam-gate\", \"crates/seam-policy\", \"crates/seam-cli\"]\n").unwrap();
    for c in ["seam-gate", "seam-policy", "seam-cli"] {
        std::fs::create_dir_all(r.join("crates").join(c).join("src")).unwrap();
        std::fs::write(
            r.join("crates").join(c).join("Cargo.toml"),
            format!("[package]\nname = \"{c}\"\n"),
        )
        .unwrap();
        std::fs::write(r.join("crates").join(c).join("src/lib.rs"), "\n").unwrap();
    }
    git(&r, &["add", "-A"]);
    git(&r, &["commit", "-q", "-m", "seam"]);
}

#[test]
fn seams_own_source_follows_self_modify_and_never_changes_its_core() {
    let f = Fixture::new();
    seam_like(&f);
    // The built-in policy asks for self.modify: a change is staged, never applied (below);
    // `deny` refuses the builder on seam's own source outright.
    assert_eq!(f.config().self_modify, Decision::Ask);
    let mut config = f.config();
    config.self_modify = Decision::Deny;
    let tools = LocalTools::open(config).unwrap();
    assert!(tools.is_self_modification());
    let e = refused(
        &tools,
        "m",
        json!({"op": "write", "path": "crates/seam-cli/src/lib.rs", "content": "x"}),
    );
    assert_eq!(e.code, RefusalCode::CapabilityDenied, "{e}");
    for decision in [Decision::Ask, Decision::Allow] {
        let mut config = f.config();
        config.self_modify = decision;
        let tools = LocalTools::open(config).unwrap();
        let t = turn(&format!("m-{decision}"));
        for core in ["crates/seam-policy/src/lib.rs", "Cargo.toml"] {
            let e = tools
                .call(
                    &t,
                    "builder",
                    &params(json!({"op": "write", "path": core, "content": "x"})),
                )
                .unwrap_err();
            assert_eq!(e.code, RefusalCode::CorePath, "{core}: {e}");
        }
        tools
            .call(&t, "builder", &params(json!({"op": "write", "path": "crates/seam-cli/src/lib.rs", "content": "// better\n"})))
            .unwrap();
        // Staged, never applied: it waits in the queue like any change.
        let items = tools.finish_turn(&t).unwrap();
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].verdict, Verdict::Pass, "{}", items[0].critic);
        assert_eq!(
            std::fs::read_to_string(f.repo().join("crates/seam-cli/src/lib.rs")).unwrap(),
            "\n"
        );
        ReturnQueue::open(&f.home())
            .unwrap()
            .reject(items[0].id)
            .unwrap();
    }
    // A core change that reached the worktree by other means fails the Critic.
    let mut config = f.config();
    config.self_modify = Decision::Ask;
    let tools = LocalTools::open(config).unwrap();
    let t = turn("m-sneak");
    tools
        .call(
            &t,
            "builder",
            &params(
                json!({"op": "write", "path": "crates/seam-cli/src/lib.rs", "content": "// a\n"}),
            ),
        )
        .unwrap();
    let (_, wt) = tools.turn_branch("m-sneak").unwrap();
    std::fs::write(wt.join("crates/seam-policy/src/lib.rs"), "// weaker\n").unwrap();
    git(&wt, &["commit", "-q", "-am", "sneak"]);
    let items = tools.finish_turn(&t).unwrap();
    assert_eq!(items[0].verdict, Verdict::Fail);
    assert!(
        items[0].critic.contains("seam's core"),
        "{}",
        items[0].critic
    );
}
