//! The agent never holds the operator's `.git`: the builder's branch lives in
//! a staging repository, and approval brings its commits over with git's
//! config-driven programs off. Each test plants what a compromised agent can
//! write (the git directory its worktree points to, its queue row) and shows
//! the operator's approval runs none of it.

mod common;

use std::collections::BTreeMap;
use std::os::unix::fs::PermissionsExt;
use std::path::{Path, PathBuf};
use std::process::Command;

use common::{Fixture, git, params, turn};
use seam_local::{LocalTools, QueueError, QueueItem, ReturnQueue, Staged, Status};
use seam_protocol::RefusalCode;
use serde_json::json;

/// Every file under `dir` and its bytes (empty when `dir` does not exist).
fn snapshot(dir: &Path) -> BTreeMap<PathBuf, Vec<u8>> {
    let mut out = BTreeMap::new();
    let mut todo = vec![dir.to_path_buf()];
    while let Some(d) = todo.pop() {
        let Ok(entries) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in entries.flatten() {
            let p = e.path();
            if e.file_type().unwrap().is_dir() {
                todo.push(p);
            } else {
                out.insert(p.clone(), std::fs::read(&p).unwrap_or_default());
            }
        }
    }
    out
}

/// A script at `path` that records it ran by creating `marker`.
fn marker_script(path: &Path, marker: &Path) {
    std::fs::write(
        path,
        format!(
            "#!/bin/sh\ntouch '{}'\ncat 2>/dev/null\nexit 0\n",
            marker.display()
        ),
    )
    .unwrap();
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
}

/// One builder turn writing `files`, ended: its queue item.
fn staged(f: &Fixture, tools: &LocalTools, id: &str, files: &[(&str, &str)]) -> QueueItem {
    let t = turn(id);
    for (path, content) in files {
        tools
            .call(
                &t,
                "builder",
                &params(json!({"op": "write", "path": path, "content": content})),
            )
            .unwrap();
    }
    let _ = f;
    tools.finish_turn(&t).unwrap().remove(0)
}

fn tip_of(item: &QueueItem) -> String {
    match &item.staged {
        Staged::Branch { tip, .. } => tip.clone(),
        other => panic!("not a branch: {other:?}"),
    }
}

/// `git cat-file -e` in `dir`: true when the object is there.
fn has_object(dir: &Path, oid: &str) -> bool {
    Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["cat-file", "-e", oid])
        .output()
        .unwrap()
        .status
        .success()
}

/// Rewrites an item's row as a compromised agent can: its verdict to pass.
fn forge_pass(home: &Path, id: i64) {
    let conn = rusqlite::Connection::open(seam_home::SeamHome::new(home).agent_queue()).unwrap();
    conn.execute(
        "UPDATE items SET verdict = 'pass', critic = 'pass: all good', preview = '' WHERE id = ?1",
        [id],
    )
    .unwrap();
}

#[test]
fn the_operators_repository_never_holds_the_branch() {
    let f = Fixture::new();
    let tools = f.tools();
    // What the launcher grants the agent: the object directories, nothing
    // else of the operator's .git.
    let objects = tools.repository_objects();
    assert_eq!(
        objects,
        vec![std::fs::canonicalize(f.repo().join(".git/objects")).unwrap()]
    );
    assert_eq!(tools.repository(), Some(f.repo().as_path()));
    let operator_git = snapshot(&f.repo().join(".git"));
    let item = staged(&f, &tools, "s1", &[("a.txt", "a\n")]);
    let tip = tip_of(&item);
    assert_eq!(tip.len(), 40);
    // Before approval: no seam branch, no object of the branch, not a byte
    // of the operator's .git changed.
    let all = git(&f.repo(), &["branch", "-a"]);
    assert!(!all.contains("seam"), "{all}");
    assert!(!has_object(&f.repo(), &tip));
    assert_eq!(snapshot(&f.repo().join(".git")), operator_git);
    // The worktree's git directory is the staging repository's.
    let (_, wt) = match &item.staged {
        Staged::Branch {
            worktree,
            staging_repo,
            ..
        } => (staging_repo.clone(), worktree.clone()),
        _ => unreachable!(),
    };
    let common = git(
        &wt,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    );
    assert_eq!(Path::new(&common), f.staging());
    assert_eq!(f.staged("seam/s1-1"), tip);
    // The turn that commits nothing leaves nothing, there either.
    let t = turn("s1-empty");
    tools
        .call(
            &t,
            "builder",
            &params(json!({"op": "write", "path": "README.md", "content": "hello\n"})),
        )
        .unwrap();
    assert!(tools.finish_turn(&t).unwrap().is_empty());
    let staged_branches = git(&f.staging(), &["branch", "--list", "seam/*"]);
    assert!(!staged_branches.contains("s1-empty"), "{staged_branches}");
}

#[test]
fn a_critic_failed_secret_never_reaches_the_operators_repository() {
    // Finding 12: a failed change still left the secret on a branch of the
    // operator's repository, where `git push --all` would publish it.
    let f = Fixture::new();
    let tools = f.tools();
    let aws = "AWS_ACCESS_KEY_ID=AKIAZ4X7QW3RT5YU8IOP\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9Tk2Lm8N\n";
    let item = staged(&f, &tools, "leak", &[("config/settings.txt", aws)]);
    assert_eq!(item.verdict, seam_local::Verdict::Fail, "{}", item.critic);
    let tip = tip_of(&item);
    let all = git(&f.repo(), &["branch", "-a"]);
    assert!(!all.contains("seam"), "{all}");
    assert!(!has_object(&f.repo(), &tip));
    let mut q = ReturnQueue::open(&f.home()).unwrap();
    q.reject(item.id).unwrap();
    let all = git(&f.repo(), &["branch", "-a"]);
    assert!(!all.contains("seam"), "{all}");
    assert!(!has_object(&f.repo(), &tip));
    // The next branch the builder opens forgets the rejected one in the
    // staging repository too.
    staged(&f, &tools, "next", &[("b.txt", "b\n")]);
    let left = git(&f.staging(), &["branch", "--list", "seam/*"]);
    assert!(!left.contains("seam/leak-1"), "{left}");
}

#[test]
fn a_forged_pass_does_not_carry_a_secret_into_the_operators_repository() {
    let f = Fixture::new();
    let tools = f.tools();
    let aws = "AWS_ACCESS_KEY_ID=AKIAZ4X7QW3RT5YU8IOP\nAWS_SECRET_ACCESS_KEY=wJalrXUtnFEMI/K7MDENG/bPxRfiCYzq9Tk2Lm8N\n";
    let item = staged(&f, &tools, "forged", &[("config/settings.txt", aws)]);
    let tip = tip_of(&item);
    forge_pass(&f.home(), item.id);
    let main_before = f.head("main");
    let mut q = ReturnQueue::open(&f.home()).unwrap();
    let e = q.approve(item.id).unwrap_err();
    assert!(matches!(e, QueueError::CriticRejected { .. }), "{e}");
    let said = e.to_string();
    assert!(said.contains("secret") && said.contains("aws"), "{said}");
    assert!(said.contains("config/settings.txt"), "{said}");
    assert!(!said.contains("wJalrXUtnFEMI"), "{said}");
    assert_eq!(f.head("main"), main_before);
    assert!(!f.repo().join("config/settings.txt").exists());
    // The refused commits were checked in a quarantine: none of their
    // objects is left in the operator's repository.
    assert!(!has_object(&f.repo(), &tip));
    let objects = f.repo().join(".git/objects");
    let incoming: Vec<_> = std::fs::read_dir(&objects)
        .unwrap()
        .flatten()
        .filter(|e| e.file_name().to_string_lossy().starts_with("incoming"))
        .collect();
    assert!(incoming.is_empty(), "{incoming:?}");
    assert_eq!(q.get(item.id).unwrap().unwrap().status, Status::Pending);
    q.reject(item.id).unwrap();
}

#[test]
fn approve_runs_nothing_planted_in_the_branchs_git_directory() {
    let f = Fixture::new();
    let tools = f.tools();
    let item = staged(
        &f,
        &tools,
        "plant",
        &[("a.txt", "a\n"), ("src/more.rs", "pub fn more() {}\n")],
    );
    let tip = tip_of(&item);
    let Staged::Branch { worktree, .. } = &item.staged else {
        unreachable!()
    };
    // The git directory the agent's worktree uses: what the agent can write.
    let gitdir = PathBuf::from(git(
        worktree,
        &["rev-parse", "--path-format=absolute", "--git-common-dir"],
    ));
    let operator = f.repo().join(".git");
    let before = (
        std::fs::read(operator.join("config")).unwrap(),
        snapshot(&operator.join("hooks")),
        snapshot(&operator.join("info")),
    );
    let markers = f.dir.path().join("markers");
    std::fs::create_dir(&markers).unwrap();
    let scripts = f.dir.path().join("scripts");
    std::fs::create_dir(&scripts).unwrap();
    let hooks = gitdir.join("hooks");
    std::fs::create_dir_all(&hooks).unwrap();
    for hook in [
        "post-checkout",
        "post-merge",
        "reference-transaction",
        "pre-commit",
        "post-index-change",
        "pre-auto-gc",
    ] {
        marker_script(&hooks.join(hook), &markers.join(hook));
    }
    for s in ["smudge", "clean", "process", "fsmonitor", "diff", "pager"] {
        marker_script(&scripts.join(s), &markers.join(s));
    }
    let sc = |s: &str| scripts.join(s).display().to_string();
    let mut config = std::fs::OpenOptions::new()
        .append(true)
        .open(gitdir.join("config"))
        .unwrap();
    use std::io::Write;
    write!(
        config,
        "[filter \"seam\"]\n\tsmudge = {}\n\tclean = {}\n\tprocess = {}\n\trequired = true\n[core]\n\tfsmonitor = {}\n\thooksPath = {}\n\tpager = {}\n[diff]\n\texternal = {}\n",
        sc("smudge"),
        sc("clean"),
        sc("process"),
        sc("fsmonitor"),
        hooks.display(),
        sc("pager"),
        sc("diff"),
    )
    .unwrap();
    std::fs::create_dir_all(gitdir.join("info")).unwrap();
    std::fs::write(gitdir.join("info/attributes"), "* filter=seam diff=seam\n").unwrap();
    // Approve, as the operator.
    let mut q = ReturnQueue::open(&f.home()).unwrap();
    let d = q.approve(item.id).unwrap();
    assert_eq!(d.status, Status::Approved, "{}", d.message);
    let ran: Vec<_> = std::fs::read_dir(&markers)
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert!(ran.is_empty(), "planted programs ran: {ran:?}");
    let after = (
        std::fs::read(operator.join("config")).unwrap(),
        snapshot(&operator.join("hooks")),
        snapshot(&operator.join("info")),
    );
    assert!(
        after == before,
        "the operator's .git/config, hooks or info changed"
    );
    assert_eq!(f.head("main"), tip, "main moved to the branch's tip");
    assert_eq!(
        std::fs::read_to_string(f.repo().join("a.txt")).unwrap(),
        "a\n"
    );
    assert_eq!(git(&f.repo(), &["status", "--porcelain"]), "");
    assert!(!worktree.exists());
    // Control: the plant was live; a git run in that directory runs it.
    let out = f.dir.path().join("control");
    std::fs::create_dir(&out).unwrap();
    Command::new("git")
        .arg("--git-dir")
        .arg(&gitdir)
        .arg("--work-tree")
        .arg(&out)
        .args(["checkout", &tip, "--", "a.txt"])
        .output()
        .unwrap();
    assert!(
        markers.join("smudge").exists() || markers.join("process").exists(),
        "the planted filter runs in its own repository"
    );
}

#[test]
fn a_branch_adding_a_filter_attribute_is_refused_at_approve() {
    for attribute in ["* filter=seam", "*.txt filter=lfs", "data.txt diff=seam"] {
        let f = Fixture::new();
        // The operator's own config defines the drivers (a tool they use).
        let marker = f.dir.path().join("filter-ran");
        let script = f.dir.path().join("driver");
        marker_script(&script, &marker);
        for (k, v) in [
            ("filter.seam.smudge", script.display().to_string()),
            ("filter.seam.clean", script.display().to_string()),
            ("filter.lfs.smudge", script.display().to_string()),
            ("filter.lfs.clean", script.display().to_string()),
            ("diff.seam.textconv", script.display().to_string()),
            ("diff.seam.command", script.display().to_string()),
        ] {
            git(&f.repo(), &["config", k, &v]);
        }
        let tools = f.tools();
        let item = staged(
            &f,
            &tools,
            "attr",
            &[
                ("data.txt", "data\n"),
                (".gitattributes", &format!("{attribute}\n")),
            ],
        );
        // The Critic says so, and a forged pass does not get it through.
        assert_eq!(item.verdict, seam_local::Verdict::Fail, "{}", item.critic);
        assert!(item.critic.contains(".gitattributes"), "{}", item.critic);
        forge_pass(&f.home(), item.id);
        let main_before = f.head("main");
        let mut q = ReturnQueue::open(&f.home()).unwrap();
        let e = q.approve(item.id).unwrap_err();
        let said = e.to_string();
        assert!(matches!(e, QueueError::CriticRejected { .. }), "{said}");
        assert!(
            said.contains(".gitattributes line 1"),
            "{attribute}: {said}"
        );
        assert!(!marker.exists(), "{attribute}: the driver ran");
        assert_eq!(f.head("main"), main_before);
        assert!(!f.repo().join("data.txt").exists());
        if attribute.contains("filter=") {
            // Control: the operator's filter is live for that attribute.
            let attrs = f.dir.path().join("attrs");
            std::fs::write(&attrs, format!("{attribute}\n")).unwrap();
            std::fs::write(f.dir.path().join("data.txt"), "data\n").unwrap();
            let ran = Command::new("git")
                .arg("-C")
                .arg(f.repo())
                .arg("-c")
                .arg(format!("core.attributesFile={}", attrs.display()))
                .args(["hash-object", "--path=data.txt"])
                .arg(f.dir.path().join("data.txt"))
                .output()
                .unwrap();
            assert!(ran.status.success());
            assert!(
                marker.exists(),
                "{attribute}: the control did not run the filter"
            );
        }
    }
}

#[test]
fn harmless_attributes_are_approved() {
    let f = Fixture::new();
    let tools = f.tools();
    let item = staged(
        &f,
        &tools,
        "attr-ok",
        &[(
            ".gitattributes",
            "*.bin -diff\n*.png binary\n* text=auto eol=lf\n",
        )],
    );
    assert_eq!(item.verdict, seam_local::Verdict::Pass, "{}", item.critic);
    let tip = tip_of(&item);
    ReturnQueue::open(&f.home())
        .unwrap()
        .approve(item.id)
        .unwrap();
    assert_eq!(f.head("main"), tip);
}

#[test]
fn an_altered_row_is_refused_and_removes_nothing_outside_staging() {
    let f = Fixture::new();
    let tools = f.tools();
    let item = staged(&f, &tools, "alter", &[("a.txt", "a\n")]);
    let keep = f.dir.path().join("keep");
    std::fs::create_dir(&keep).unwrap();
    std::fs::write(keep.join("file"), "mine\n").unwrap();
    let Staged::Branch { .. } = &item.staged else {
        unreachable!()
    };
    let conn = rusqlite::Connection::open(f.layout().agent_queue()).unwrap();
    let detail: String = conn
        .query_row("SELECT detail FROM items WHERE id = ?1", [item.id], |r| {
            r.get(0)
        })
        .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&detail).unwrap();
    // A worktree outside staging, a tip that is not an object id.
    v["worktree"] = json!(keep);
    v["tip"] = json!("HEAD");
    conn.execute(
        "UPDATE items SET detail = ?2 WHERE id = ?1",
        rusqlite::params![item.id, v.to_string()],
    )
    .unwrap();
    let mut q = ReturnQueue::open(&f.home()).unwrap();
    let e = q.approve(item.id).unwrap_err();
    assert!(e.to_string().contains("not a full hexadecimal"), "{e}");
    let d = q.reject(item.id).unwrap();
    assert!(d.message.contains("left in place"), "{}", d.message);
    assert_eq!(
        std::fs::read_to_string(keep.join("file")).unwrap(),
        "mine\n"
    );
}

#[test]
fn an_item_from_an_older_seam_is_refused_at_approve() {
    let f = Fixture::new();
    let tools = f.tools();
    let item = staged(&f, &tools, "old", &[("a.txt", "a\n")]);
    let conn = rusqlite::Connection::open(f.layout().agent_queue()).unwrap();
    let detail: String = conn
        .query_row("SELECT detail FROM items WHERE id = ?1", [item.id], |r| {
            r.get(0)
        })
        .unwrap();
    let mut v: serde_json::Value = serde_json::from_str(&detail).unwrap();
    let m = v.as_object_mut().unwrap();
    m.remove("staging_repo");
    m.remove("tip");
    conn.execute(
        "UPDATE items SET detail = ?2 WHERE id = ?1",
        rusqlite::params![item.id, v.to_string()],
    )
    .unwrap();
    let mut q = ReturnQueue::open(&f.home()).unwrap();
    let e = q.approve(item.id).unwrap_err();
    let said = e.to_string();
    assert!(
        said.contains("older seam") && said.contains("reject"),
        "{said}"
    );
    q.reject(item.id).unwrap();
}

#[test]
fn a_detached_head_leaves_the_builder_unavailable_and_says_why() {
    let f = Fixture::new();
    let head = f.head("HEAD");
    git(&f.repo(), &["checkout", "-q", "--detach", &head]);
    let tools = f.tools();
    assert_eq!(tools.repository(), Some(f.repo().as_path()));
    assert!(tools.repository_objects().is_empty());
    assert!(tools.staging_repository().is_none());
    let why = tools.builder_unavailable().unwrap();
    assert!(why.contains("detached HEAD"), "{why}");
    let e = tools
        .call(
            &turn("d"),
            "builder",
            &params(json!({"op": "write", "path": "a.txt", "content": "a\n"})),
        )
        .unwrap_err();
    assert_eq!(e.code, RefusalCode::Unavailable);
    assert!(e.message.contains("detached HEAD"), "{e}");
}
