//! `seam doctor` reports every wall and what python.run will do; `seam policy show` says when
//! the policy allows unsandboxed runs; `seam invoke python.run` runs behind the walls.

mod common;

use common::Owner;
use serde_json::Value;

#[test]
fn doctor_names_every_wall_and_the_outcome() {
    let owner = Owner::new();
    let out = owner.seam().args(["doctor", "--json"]).output().unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    let names: Vec<&str> = v["protections"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    for wall in [
        "user namespace",
        "PID namespace",
        "network namespace",
        "mount namespace",
        "Landlock (filesystem)",
        "seccomp filter",
        "rlimits",
        "python3",
    ] {
        assert!(names.contains(&wall), "{wall} is not reported: {names:?}");
    }
    let all_up = v["protections"]
        .as_array()
        .unwrap()
        .iter()
        .all(|p| p["active"] == true || p["required"] == false);
    // the exit code follows the walls: 0 when all are up (and print(1) ran), 1 otherwise
    assert_eq!(
        out.status.code(),
        Some(if all_up && v["end_to_end"]["ok"] == true {
            0
        } else {
            1
        }),
        "{v}"
    );
    assert_eq!(v["python_run_decision"], "ask");
    let text = owner.seam().arg("doctor").output().unwrap();
    let text = String::from_utf8_lossy(&text.stdout);
    assert!(text.contains("python.run here:"), "{text}");
}

#[test]
fn policy_show_says_when_python_run_may_run_unsandboxed() {
    let owner = Owner::new();
    let policy = owner.policy("[capabilities]\n\"python.run\" = \"allow-unsandboxed\"\n");
    let out = owner
        .seam()
        .args(["--policy", policy.to_str().unwrap(), "policy", "show"])
        .output()
        .unwrap();
    assert!(out.status.success());
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.contains("allow-unsandboxed"), "{text}");
    let doctor = owner
        .seam()
        .args(["--policy", policy.to_str().unwrap(), "doctor", "--json"])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&doctor.stdout).unwrap();
    assert_eq!(v["python_run_unsandboxed_allowed"], true);
}

#[test]
fn invoke_python_run_runs_behind_the_walls_once_allowed() {
    let owner = Owner::new();
    let policy = owner.policy("[capabilities]\n\"python.run\" = \"allow\"\n");
    let out = owner
        .seam()
        .args([
            "--policy",
            policy.to_str().unwrap(),
            "invoke",
            "python.run",
            r#"{"code": "import os; print(os.getcwd(), os.path.exists(os.environ['HOME'] + '/../home'))", "timeout_s": 5}"#,
        ])
        .output()
        .unwrap();
    let v: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(out.status.code(), Some(0), "{v}");
    assert_eq!(v["output"]["stdout"], "/scratch False\n", "{v}");
    assert_eq!(v["output"]["sandboxed"], true);
    assert_eq!(v["tainted"], false);
}

#[test]
fn a_killed_gate_takes_its_sandbox_with_it() {
    let owner = Owner::new();
    let policy = owner.policy("[capabilities]\n\"python.run\" = \"allow\"\n");
    let tag = format!("SEAM-ORPHAN-{}", std::process::id());
    let params = serde_json::json!({
        "code": format!("while True:\n    pass  # {tag}\n"),
        "timeout_s": 20,
    });
    let seam = assert_cmd::cargo::cargo_bin("seam");
    let mut gate = std::process::Command::new(seam)
        .env_clear()
        .env("HOME", &owner.home)
        .env("SEAM_HOME", &owner.seam_home)
        .env("PATH", std::env::var_os("PATH").unwrap_or_default())
        .current_dir(&owner.workspace)
        .args(["--policy", policy.to_str().unwrap(), "invoke", "python.run"])
        .arg(params.to_string())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let running = |tag: &str| {
        std::fs::read_dir("/proc")
            .unwrap()
            .flatten()
            .filter(|e| {
                // the sandboxed python3 (`-E -s -B -u -c CODE`), not the seam command
                std::fs::read(e.path().join("cmdline")).is_ok_and(|c| {
                    let c = String::from_utf8_lossy(&c);
                    c.contains(tag) && c.contains("\0-E\0-s\0")
                })
            })
            .count()
    };
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(15);
    while running(&tag) == 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the sandboxed code never started"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    gate.kill().unwrap();
    gate.wait().unwrap();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while running(&tag) > 0 {
        assert!(
            std::time::Instant::now() < deadline,
            "the sandbox outlived the gate that started it"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
