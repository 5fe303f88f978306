//! The agent's walls attacked from inside: `seam __agent-attack` raises exactly the walls
//! `seam ask` raises for its agent (the same code path: the gate started first, then the
//! environment stripped, then Landlock), tries what a compromised agent would try, and
//! reports the kernel's answers. Each attack must be denied with EACCES, the allowed
//! things must still work, and a call through the gate must still be answered.
//!
//! `/etc/passwd` is a fair target: the agent's walls let through only a short list of
//! `/etc` files (the loader's cache, name resolution, TLS roots, git's system config).

mod common;

use std::net::TcpListener;

use common::{Owner, ServiceGate};
use serde_json::Value;

const EACCES: i64 = 13;

/// Runs `seam __agent-attack` as `cmd` says, and returns its report (it must exit 0).
fn attack_report(cmd: &mut assert_cmd::Command) -> Value {
    let out = cmd.output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

fn attempt<'a>(report: &'a Value, kind: &str, target: &str) -> &'a Value {
    report["attempts"]
        .as_array()
        .unwrap()
        .iter()
        .find(|a| a["attack"] == kind && a["target"] == target)
        .unwrap_or_else(|| panic!("no {kind} attempt on {target}: {report}"))
}

fn denied_by_the_kernel(report: &Value, kind: &str, target: &str) {
    let a = attempt(report, kind, target);
    assert_eq!(a["denied"], true, "{kind} {target} was allowed: {a}");
    assert_eq!(
        a["errno"].as_i64(),
        Some(EACCES),
        "{kind} {target} failed, but not by the wall: {a}"
    );
}

fn allowed(report: &Value, kind: &str, target: &str) {
    let a = attempt(report, kind, target);
    assert_eq!(a["denied"], false, "{kind} {target} should work: {a}");
}

#[test]
fn the_confined_agent_cannot_touch_the_world_but_reaches_the_gate() {
    let owner = Owner::new();
    owner.write("project/notes.md", b"The launch moves to Thursday.\n");
    let key = owner.write(".ssh/id_ed25519", b"-----BEGIN OPENSSH PRIVATE KEY-----\n");
    let keeper = owner.layout().keys().join("planted");
    std::fs::create_dir_all(keeper.parent().unwrap()).unwrap();
    std::fs::write(&keeper, b"not for the agent").unwrap();
    // The gate's config (protected: it says what the gate starts).
    let gate_config = owner.layout().gate_config();
    std::fs::write(&gate_config, b"# the owner's\n").unwrap();
    let staged = owner.layout().staging().join("readable.txt");
    std::fs::create_dir_all(staged.parent().unwrap()).unwrap();
    std::fs::write(&staged, b"the agent's own").unwrap();

    let model = TcpListener::bind("127.0.0.1:0").unwrap();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let model_port = model.local_addr().unwrap().port().to_string();
    let other_port = other.local_addr().unwrap().port().to_string();
    let home_write = owner.home.join("planted-by-agent");
    let tmp_write = owner.dir.path().join("outside-everything");
    // The embedded model's prompt cache (made by the walls' plan, inside them).
    let kv_write = owner.layout().prompt_cache().join("probe.state");

    let report = attack_report(
        owner
            .seam()
            .env("GITHUB_TOKEN", "ghp_0123456789abcdefghijklmnopqrstuvwxyz")
            .env(
                "AWS_SECRET_ACCESS_KEY",
                "wJalrXUtnFEMI/K7MDENG/bPxRfiCYEXAMPLEKEY",
            )
            .env("SSH_AUTH_SOCK", "/run/agent.sock")
            .args(["__agent-attack", "--model-url"])
            .arg(format!("http://127.0.0.1:{model_port}/v1"))
            .arg("--read")
            .arg(&key)
            .arg("--read")
            .arg("/etc/passwd")
            .arg("--read")
            .arg(&keeper)
            .arg("--read")
            .arg("/proc/self/environ")
            .arg("--read")
            .arg(&staged)
            .arg("--read")
            .arg(&gate_config)
            .arg("--write")
            .arg(&gate_config)
            .arg("--write")
            .arg(&home_write)
            .arg("--write")
            .arg(&tmp_write)
            .arg("--write")
            .arg(&kv_write)
            .args(["--connect", &other_port, "--connect", &model_port])
            .args(["--exec", "/usr/bin/id", "--exec", "git"])
            .args(["--env", "GITHUB_TOKEN", "--env", "AWS_SECRET_ACCESS_KEY"])
            .args(["--env", "SSH_AUTH_SOCK", "--env", "PATH"])
            .args(["--gate-read", "notes.md"]),
    );
    let walls = &report["confinement"];
    assert_eq!(
        walls["filesystem"], true,
        "Landlock is not active here, so nothing below could be denied by it: {walls}"
    );

    denied_by_the_kernel(&report, "read", key.to_str().unwrap());
    denied_by_the_kernel(&report, "read", "/etc/passwd");
    denied_by_the_kernel(&report, "read", keeper.to_str().unwrap());
    denied_by_the_kernel(&report, "read", "/proc/self/environ");
    denied_by_the_kernel(&report, "write", home_write.to_str().unwrap());
    denied_by_the_kernel(&report, "write", tmp_write.to_str().unwrap());
    denied_by_the_kernel(&report, "exec", "/usr/bin/id");
    denied_by_the_kernel(&report, "read", gate_config.to_str().unwrap());
    denied_by_the_kernel(&report, "write", gate_config.to_str().unwrap());
    assert_eq!(std::fs::read(&gate_config).unwrap(), b"# the owner's\n");
    assert!(!home_write.exists() && !tmp_write.exists());
    allowed(&report, "read", staged.to_str().unwrap());
    allowed(&report, "exec", "git");
    allowed(&report, "write", kv_write.to_str().unwrap());

    assert_eq!(
        walls["network"],
        walls["landlock_abi"].as_u64().unwrap() >= 4,
        "network rules are used wherever the ABI has them: {walls}"
    );
    if walls["network"] == true {
        denied_by_the_kernel(&report, "connect", &other_port);
        allowed(&report, "connect", &model_port);
    }

    let env = &report["env_present"];
    assert_eq!(env["GITHUB_TOKEN"], false, "{env}");
    assert_eq!(env["AWS_SECRET_ACCESS_KEY"], false, "{env}");
    assert_eq!(env["SSH_AUTH_SOCK"], false, "{env}");
    assert_eq!(env["PATH"], true, "{env}");
    assert!(
        walls["initial_env_blanked"].as_u64().unwrap() >= 3,
        "the values are blanked in the initial environment block too: {walls}"
    );
    let removed = walls["env_removed"].to_string();
    assert!(
        removed.contains("GITHUB_TOKEN") && !removed.contains("ghp_"),
        "names only, never values: {removed}"
    );

    let gate = &report["gate"];
    assert_eq!(gate["ok"], true, "{gate}");
    assert!(
        gate["answer"].to_string().contains("Thursday"),
        "the gate read the workspace file for the confined agent: {gate}"
    );
}

#[test]
fn no_confine_and_require_confinement_contradict() {
    let owner = Owner::new();
    let out = owner
        .seam()
        .args(["ask", "hi", "--no-confine", "--require-confinement"])
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(2),
        "the two flags contradict each other: {}",
        String::from_utf8_lossy(&out.stderr)
    );
}

#[test]
fn doctor_reports_the_agents_walls_the_policy_the_socket_and_the_ledger() {
    let owner = Owner::new();
    owner.write("project/notes.md", b"hello\n");
    let (code, _) = common::read(&owner, serde_json::json!({"path": "notes.md"}));
    assert_eq!(code, 0, "a call makes the ledger");
    let policy = owner.policy("");
    let out = owner
        .seam()
        .arg("--policy")
        .arg(&policy)
        .args(["doctor", "--json"])
        .output()
        .unwrap();
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let agent = &report["agent"];
    assert_eq!(agent["policy_file"], policy.to_str().unwrap(), "{agent}");
    let ledger = agent["ledger"].as_str().unwrap();
    assert!(ledger.starts_with("verified: 1 records"), "{ledger}");
    assert!(
        agent["gate_socket"].as_str().unwrap().contains("none"),
        "{agent}"
    );
    let walls = agent["agent"].as_array().unwrap();
    assert!(
        walls
            .iter()
            .any(|w| w[0].as_str().unwrap().starts_with("credentials stripped") && w[1] == true),
        "{agent}"
    );
    assert_eq!(
        agent["landlock_abi"], report["landlock_abi"],
        "one kernel, one answer"
    );
}

/// Findings 2 and 3 of the security review, attacked from inside the agent's real walls:
/// the confined agent cannot read the turn opener, open a fresh (untainted) turn, call
/// without a turn, or close another session's turn whose id it knows; an attached file is
/// read by the gate (not through the walls, which no longer grant it) and taints the turn
/// from its start.
#[test]
fn the_confined_agent_cannot_open_leave_or_close_turns_and_an_attachment_taints_its_turn() {
    let owner = Owner::new();
    let attached = owner.write("project/notes.md", b"The launch moves to Thursday.\n");
    let gate = ServiceGate::start(&owner);
    // another session's turn, opened by its own launcher
    let out = owner.seam().arg("__open-turn").output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let other: seam_protocol::wire::TurnOpened = serde_json::from_slice(&out.stdout).unwrap();
    let opener = owner.layout().turn_opener();

    let report = attack_report(
        owner
            .seam()
            .arg("__agent-attack")
            .arg("--attach")
            .arg(&attached)
            .arg("--read")
            .arg(&attached)
            .arg("--read")
            .arg(&opener)
            .arg("--gate-fresh-turn")
            .arg("--gate-close")
            .arg(&other.turn),
    );
    assert_eq!(report["confinement"]["filesystem"], true, "{report}");
    denied_by_the_kernel(&report, "read", opener.to_str().unwrap());
    denied_by_the_kernel(&report, "read", attached.to_str().unwrap());
    let t = &report["turn_attacks"];
    assert_eq!(t["open_turn"]["denied"], true, "{t}");
    assert!(
        t["open_turn"]["error"].as_str().unwrap().contains("403"),
        "{t}"
    );
    assert_eq!(t["invoke_without_turn"]["denied"], true, "{t}");
    assert_eq!(
        t["invoke_without_turn"]["answer"]["refused"]["code"], "unknown_turn",
        "{t}"
    );
    assert_eq!(t[format!("close {}", other.turn)]["denied"], true, "{t}");
    assert_eq!(
        t["own_turn_tainted"], true,
        "the attachment, read by the gate in the turn, taints it: {t}"
    );

    // the other session's turn is still open for whoever holds its token
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let still = runtime.block_on(async {
        seam_cli::gate_client::GateClient::new(seam_cli::gate_client::GateEndpoint::unix_in(
            &owner.seam_home,
        ))
        .invoke("facts.get", serde_json::json!({"fact": "os"}), Some(&other))
        .await
        .unwrap()
    });
    assert_eq!(still.status, 200, "{:?}", still.answer);
    drop(gate);
}

/// Issue 21, from inside the agent's real walls: the operator's words for the turn are given
/// by the launcher before the walls go up, and the confined agent cannot add to them: not on
/// its own turn (it holds the turn's token, not the opener), not by opening a turn with them,
/// and it cannot read the opener to try either.
#[test]
fn the_confined_agent_cannot_make_a_value_the_operators_words() {
    let owner = Owner::new();
    let gate = ServiceGate::start(&owner);
    let report = attack_report(
        owner
            .seam()
            .arg("__agent-attack")
            .args(["--task", "pay the rent to GB29 NWBK 6016 1331 9268 19"])
            .args(["--gate-endorse", "mallory@evil.example"]),
    );
    assert_eq!(report["confinement"]["filesystem"], true, "{report}");
    let t = &report["turn_attacks"];
    assert_eq!(t["endorse_read_opener"]["denied"], true, "{t}");
    for attempt in ["endorse_own_turn no_opener", "endorse_fresh_turn no_opener"] {
        assert_eq!(t[attempt]["denied"], true, "{attempt}: {t}");
        assert!(
            t[attempt]["error"].as_str().unwrap().contains("403"),
            "{attempt}: {t}"
        );
    }
    assert!(
        t.get("endorse_own_turn stolen_opener").is_none(),
        "the opener was read: {t}"
    );
    drop(gate);
}

/// An attachment is admitted like a `files.read`: a protected file is refused, naming it,
/// before any model is asked.
#[test]
fn a_protected_attachment_is_refused_naming_the_file() {
    let owner = Owner::new();
    let key = owner.write(".ssh/id_ed25519", b"-----BEGIN OPENSSH PRIVATE KEY-----\n");
    let out = owner
        .seam()
        .args([
            "ask",
            "summarise it",
            "--model-url",
            "http://127.0.0.1:9/v1",
        ])
        .arg("--attach")
        .arg(&key)
        .output()
        .unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{err}");
    assert!(
        err.contains("id_ed25519") && err.contains("protected"),
        "{err}"
    );
}

/// Findings 6 and 7 of the security review, from inside the agent's real walls: no UDP
/// (seccomp), no signal to a process outside the walls (Landlock scope), and no program
/// run through the ELF loader from a program directory the walls no longer let it read.
#[test]
fn the_confined_agent_sends_no_udp_no_signal_and_runs_nothing_through_the_loader() {
    let owner = Owner::new();
    let udp = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    udp.set_nonblocking(true).unwrap();
    let port = udp.local_addr().unwrap().port().to_string();
    let mut outsider = std::process::Command::new("sleep")
        .arg("30")
        .spawn()
        .unwrap();
    let pid = outsider.id().to_string();
    let out = owner
        .seam()
        .args(["__agent-attack", "--udp", &port, "--signal", &pid])
        .args(["--exec-via-loader", "/usr/bin/id"])
        .args(["--read", "/usr/bin/id"])
        .output()
        .unwrap();
    let _ = outsider.kill();
    let _ = outsider.wait();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
    let walls = &report["confinement"];
    assert_eq!(walls["filesystem"], true, "{walls}");
    assert_eq!(walls["seccomp"], true, "seccomp is available here: {walls}");
    let udp_try = attempt(&report, "udp", &port);
    assert_eq!(udp_try["denied"], true, "{udp_try}");
    assert_eq!(
        udp_try["errno"].as_i64(),
        Some(1),
        "EPERM from seccomp: {udp_try}"
    );
    let mut buf = [0u8; 16];
    assert!(udp.recv_from(&mut buf).is_err(), "no datagram arrived");
    if walls["signals_scoped"] == true {
        let s = attempt(&report, "signal", &pid);
        assert_eq!(s["denied"], true, "{s}");
        assert_eq!(s["errno"].as_i64(), Some(1), "EPERM from the scope: {s}");
    }
    denied_by_the_kernel(&report, "read", "/usr/bin/id");
    let l = attempt(&report, "exec-via-loader", "/usr/bin/id");
    assert_eq!(l["denied"], true, "{l}");
}

/// Finding 1 of the security review, from inside the agent's real walls: the agent holds
/// no handle on the operator's `.git` (it once planted a filter in `.git/config` and
/// `.git/info/attributes` that the operator's approve then ran, and a pre-commit hook), nor
/// on the repository's working tree; it reads only the object store its staging repository
/// borrows.
#[test]
fn the_confined_agent_cannot_touch_the_operators_git_directory() {
    let owner = Owner::new();
    let repo = &owner.workspace;
    owner.write("project/README.md", b"hello\n");
    let git = |args: &[&str]| owner.git(args);
    git(&["init", "-q", "-b", "main"]);
    git(&["add", "README.md"]);
    git(&["commit", "-q", "-m", "one"]);
    let blob = git(&["rev-parse", "HEAD:README.md"]);
    let object = repo.join(".git/objects").join(&blob[..2]).join(&blob[2..]);
    assert!(object.exists());
    let dot_git = repo.join(".git");
    let config = dot_git.join("config");
    let before = std::fs::read(&config).unwrap();
    let report = attack_report(
        owner
            .seam()
            .arg("__agent-attack")
            .arg("--repo")
            .arg(repo)
            .arg("--write")
            .arg(&config)
            .arg("--write")
            .arg(dot_git.join("hooks/pre-commit"))
            .arg("--write")
            .arg(dot_git.join("info/attributes"))
            .arg("--write")
            .arg(dot_git.join("seam-filter"))
            .arg("--read")
            .arg(&config)
            .arg("--read")
            .arg(repo.join("README.md"))
            .arg("--read")
            .arg(&object),
    );
    assert_eq!(report["confinement"]["filesystem"], true, "{report}");
    for w in [
        "config",
        "hooks/pre-commit",
        "info/attributes",
        "seam-filter",
    ] {
        denied_by_the_kernel(&report, "write", dot_git.join(w).to_str().unwrap());
    }
    denied_by_the_kernel(&report, "read", config.to_str().unwrap());
    denied_by_the_kernel(&report, "read", repo.join("README.md").to_str().unwrap());
    allowed(&report, "read", object.to_str().unwrap());
    assert_eq!(std::fs::read(&config).unwrap(), before);
    assert!(!dot_git.join("hooks/pre-commit").exists());
    assert!(!dot_git.join("seam-filter").exists());
}

/// A files.read of a directory names the files in it that can be read: asked from inside
/// the agent's walls, through the gate's socket, that list is no way to learn the names of
/// the owner's protected files, of what a link points to, or of what a protected
/// directory holds.
#[test]
fn the_confined_agent_learns_no_protected_name_by_reading_a_directory() {
    let owner = Owner::new();
    owner.write("project/notes.md", b"The launch moves to Thursday.\n");
    owner.write("project/vault.kdbx", b"KDBX");
    owner.write(".ssh/id_ed25519", b"-----BEGIN OPENSSH PRIVATE KEY-----\n");
    owner.write("project/.env", b"TOKEN=x\n");
    std::os::unix::fs::symlink(
        owner.home.join(".ssh/id_ed25519"),
        owner.workspace.join("deploy-key.txt"),
    )
    .unwrap();
    std::os::unix::fs::symlink(owner.home.join(".ssh"), owner.workspace.join("keys")).unwrap();
    let gate_read = |path: &str| -> Value {
        let report = attack_report(owner.seam().args(["__agent-attack", "--gate-read", path]));
        assert_eq!(report["confinement"]["filesystem"], true, "{report}");
        assert_eq!(report["gate"]["ok"], true, "{report}");
        report["gate"]["answer"]["refused"].clone()
    };

    // The workspace: its one readable file is named; the protected file, the link to a
    // key and the hidden file are not.
    for path in [".", "~/project"] {
        let refused = gate_read(path);
        assert_eq!(refused["code"], "not_a_file", "{path}: {refused}");
        let message = refused["message"].as_str().unwrap();
        assert!(
            message.contains("notes.md (read one by its path)"),
            "{message}"
        );
        for never in ["vault", "deploy-key", "id_ed25519", ".env", "keys"] {
            assert!(!message.contains(never), "{path}: {never} named: {message}");
        }
    }
    // A protected directory, by its name or through a link to it, is refused as such, and
    // nothing in it is named.
    for path in ["~/.ssh", "keys"] {
        let refused = gate_read(path);
        assert_eq!(refused["code"], "protected", "{path}: {refused}");
        let message = refused["message"].as_str().unwrap();
        assert!(!message.contains("id_ed25519"), "{path}: {message}");
        assert!(!message.contains("can be read"), "{path}: {message}");
    }

    // The code index's tree, with no index, lists a directory's readable files by the same
    // admission: asked from inside the walls, it names nothing more.
    let gate_tree = |path: &str| -> Value {
        let report = attack_report(owner.seam().args(["__agent-attack", "--gate-tree", path]));
        assert_eq!(report["confinement"]["filesystem"], true, "{report}");
        assert_eq!(report["gate_tree"]["ok"], true, "{report}");
        report["gate_tree"]["answer"].clone()
    };
    for path in [".", "~/project"] {
        let answer = gate_tree(path);
        let output = &answer["output"];
        assert_eq!(output["indexed"], false, "{path}: {answer}");
        let files: Vec<&str> = output["files"]
            .as_array()
            .unwrap_or_else(|| panic!("{path}: {answer}"))
            .iter()
            .filter_map(Value::as_str)
            .collect();
        assert_eq!(files.len(), 1, "{path}: {files:?}");
        assert!(files[0].ends_with("notes.md"), "{path}: {files:?}");
        let text = answer.to_string();
        for never in ["vault", "deploy-key", "id_ed25519", ".env", "keys"] {
            assert!(!text.contains(never), "{path}: {never} named: {text}");
        }
    }
    for path in ["~/.ssh", "keys"] {
        let answer = gate_tree(path);
        assert_eq!(answer["refused"]["code"], "protected", "{path}: {answer}");
        assert!(
            !answer.to_string().contains("id_ed25519"),
            "{path}: {answer}"
        );
    }
}
