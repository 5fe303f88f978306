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

use common::Owner;
use serde_json::Value;

const EACCES: i64 = 13;

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
    let keeper = owner.seam_home.join("keys/planted");
    std::fs::create_dir_all(keeper.parent().unwrap()).unwrap();
    std::fs::write(&keeper, b"not for the agent").unwrap();
    let staged = owner.seam_home.join("staging/readable.txt");
    std::fs::create_dir_all(staged.parent().unwrap()).unwrap();
    std::fs::write(&staged, b"the agent's own").unwrap();

    let model = TcpListener::bind("127.0.0.1:0").unwrap();
    let other = TcpListener::bind("127.0.0.1:0").unwrap();
    let model_port = model.local_addr().unwrap().port().to_string();
    let other_port = other.local_addr().unwrap().port().to_string();
    let home_write = owner.home.join("planted-by-agent");
    let tmp_write = owner.dir.path().join("outside-everything");

    let out = owner
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
        .arg("--write")
        .arg(&home_write)
        .arg("--write")
        .arg(&tmp_write)
        .args(["--connect", &other_port, "--connect", &model_port])
        .args(["--exec", "/usr/bin/id", "--exec", "git"])
        .args(["--env", "GITHUB_TOKEN", "--env", "AWS_SECRET_ACCESS_KEY"])
        .args(["--env", "SSH_AUTH_SOCK", "--env", "PATH"])
        .args(["--gate-read", "notes.md"])
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_slice(&out.stdout).unwrap();
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
    assert!(!home_write.exists() && !tmp_write.exists());
    allowed(&report, "read", staged.to_str().unwrap());
    allowed(&report, "exec", "git");

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
