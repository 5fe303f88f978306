//! `seam gate` as a real process, and `seam invoke --gate` through it.

mod common;

use std::collections::HashSet;
use std::io::{BufRead, BufReader};
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::Owner;
use seam_cli::gate_client::{GateClient, GateEndpoint};
use serde_json::json;

/// A running `seam gate`, its stderr lines arriving on a channel.
struct GateProcess {
    child: Child,
    lines: mpsc::Receiver<String>,
    seen: Vec<String>,
    socket: PathBuf,
}

impl GateProcess {
    fn start(owner: &Owner, args: &[&str]) -> GateProcess {
        let mut child = Command::new(assert_cmd::cargo::cargo_bin("seam"))
            .arg("gate")
            .args(args)
            .env_clear()
            .env("HOME", &owner.home)
            .env("SEAM_HOME", &owner.seam_home)
            .env("PATH", std::env::var_os("PATH").unwrap_or_default())
            .current_dir(&owner.workspace)
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let stderr = child.stderr.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr).lines().map_while(Result::ok) {
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        let mut g = GateProcess {
            child,
            lines,
            seen: Vec::new(),
            socket: owner.layout().gate_socket(),
        };
        g.wait_for_line("gate listening on");
        g
    }

    /// Waits (up to 30 s) for a stderr line containing `needle`, returns it.
    fn wait_for_line(&mut self, needle: &str) -> String {
        if let Some(l) = self.seen.iter().find(|l| l.contains(needle)) {
            return l.clone();
        }
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.lines.recv_timeout(left) {
                Ok(l) => {
                    self.seen.push(l.clone());
                    if l.contains(needle) {
                        return l;
                    }
                }
                Err(_) => panic!("no line with {needle:?}; stderr so far: {:?}", self.seen),
            }
        }
    }

    fn terminate(&self) {
        let pid = rustix::process::Pid::from_raw(self.child.id() as i32).unwrap();
        rustix::process::kill_process(pid, rustix::process::Signal::TERM).unwrap();
    }

    /// Waits for exit (up to 60 s) and returns the code and every stderr line.
    fn wait(mut self) -> (i32, Vec<String>) {
        let deadline = Instant::now() + Duration::from_secs(60);
        let status = loop {
            if let Some(s) = self.child.try_wait().unwrap() {
                break s;
            }
            assert!(Instant::now() < deadline, "the gate did not exit");
            std::thread::sleep(Duration::from_millis(20));
        };
        while let Ok(l) = self.lines.recv_timeout(Duration::from_secs(2)) {
            self.seen.push(l);
        }
        (status.code().unwrap_or(-1), std::mem::take(&mut self.seen))
    }
}

impl Drop for GateProcess {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn invoke(owner: &Owner, extra: &[&str], tool: &str, params: &str) -> (i32, serde_json::Value) {
    let out = owner
        .seam()
        .arg("invoke")
        .args(extra)
        .args([tool, params])
        .output()
        .unwrap();
    let code = out.status.code().unwrap_or(-1);
    let v = serde_json::from_slice(&out.stdout).unwrap_or_else(|e| {
        panic!(
            "stdout is not JSON ({e}): {} / {}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        )
    });
    (code, v)
}

fn ledger_ids(owner: &Owner) -> Vec<String> {
    let out = owner
        .seam()
        .args(["ledger", "export", "--json"])
        .output()
        .unwrap();
    assert!(out.status.success());
    out.stdout
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(&l.unwrap()).unwrap();
            v["invocation_id"].as_str().unwrap().to_owned()
        })
        .collect()
}

fn verify(owner: &Owner) -> String {
    let out = owner.seam().args(["ledger", "verify"]).output().unwrap();
    let text =
        String::from_utf8_lossy(&out.stdout).into_owned() + &String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "the ledger verifies: {text}");
    text
}

#[test]
fn invoke_through_the_gate_prints_the_same_json_and_exit_codes_as_in_process() {
    let o = Owner::new();
    o.write("project/notes.txt", b"hello through the gate\n");
    let gate = GateProcess::start(&o, &[]);
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&gate.socket).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);

    let (code, v) = invoke(&o, &["--gate"], "files.read", r#"{"path":"notes.txt"}"#);
    assert_eq!(code, 0, "{v}");
    assert!(v["output"].to_string().contains("hello through the gate"));
    assert_eq!(v["tainted"], true);

    let (code, v) = invoke(&o, &["--gate"], "files.read", r#"{"path":"/etc/hostname"}"#);
    assert_eq!(code, 3, "{v}");
    assert_eq!(v["refused"]["code"], "not_allowed");

    let (code, v) = invoke(&o, &["--gate"], "files.read", r#"{"nope":1}"#);
    assert_eq!(code, 2, "{v}");
    assert_eq!(v["refused"]["code"], "invalid_params");

    let (code, v) = invoke(&o, &["--gate"], "no.such.tool", "{}");
    assert_eq!(code, 2, "{v}");
    assert_eq!(v["refused"]["code"], "unknown_tool");

    // a turn the gate did not open
    let (code, v) = invoke(
        &o,
        &["--gate", "--turn", "mine"],
        "files.read",
        r#"{"path":"notes.txt"}"#,
    );
    assert_eq!(code, 2, "{v}");
    assert!(
        v["refused"]["message"]
            .as_str()
            .unwrap()
            .contains("not open")
    );

    // the in-process invoke gives the same shape (it waits for the ledger,
    // which the gate holds, so it is run after the gate stops)
    gate.terminate();
    let (code, lines) = gate.wait();
    assert_eq!(code, 0, "{lines:?}");
    assert!(
        lines
            .iter()
            .any(|l| l.contains("gate stopped: 5 calls answered")),
        "{lines:?}"
    );
    assert!(!o.layout().gate_socket().exists());
    let (code, v) = invoke(&o, &[], "files.read", r#"{"path":"notes.txt"}"#);
    assert_eq!(code, 0);
    assert!(v["output"].to_string().contains("hello through the gate"));
    assert!(verify(&o).contains("6 records"));
}

#[test]
fn invoke_with_gate_and_no_gate_running_says_so() {
    let o = Owner::new();
    let out = o
        .seam()
        .args(["invoke", "--gate", "files.read", r#"{"path":"a"}"#])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(
        err.contains("no gate is listening") && err.contains("seam gate"),
        "{err}"
    );
}

#[test]
fn tcp_with_the_token_from_seams_home_and_refusal_of_non_loopback() {
    let o = Owner::new();
    o.write("project/a.txt", b"over tcp\n");
    let mut gate = GateProcess::start(&o, &["--listen", "127.0.0.1:0"]);
    let line = gate.wait_for_line("http://127.0.0.1:");
    let url: String = line
        .split_whitespace()
        .find(|w| w.starts_with("http://"))
        .unwrap()
        .trim_end_matches(';')
        .to_owned();
    let token_file = o.layout().gate_token();
    let mode = std::os::unix::fs::PermissionsExt::mode(
        &std::fs::metadata(&token_file).unwrap().permissions(),
    );
    assert_eq!(mode & 0o777, 0o600);

    let (code, v) = invoke(
        &o,
        &["--gate-url", &url],
        "files.read",
        r#"{"path":"a.txt"}"#,
    );
    assert_eq!(code, 0, "{v}");
    assert!(v["output"].to_string().contains("over tcp"));

    // a wrong token is 401, which the client reports as an error (exit 1)
    std::fs::write(&token_file, "00".repeat(32)).unwrap();
    let out = o
        .seam()
        .args([
            "invoke",
            "--gate-url",
            &url,
            "files.read",
            r#"{"path":"a.txt"}"#,
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("401") && err.contains("Bearer"), "{err}");

    let out = o
        .seam()
        .args([
            "invoke",
            "--gate-url",
            "https://127.0.0.1:1",
            "files.read",
            "{}",
        ])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));

    gate.terminate();
    let (code, _) = gate.wait();
    assert_eq!(code, 0);

    let out = o
        .seam()
        .args(["gate", "--listen", "0.0.0.0:0"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--allow-non-loopback"), "{err}");
    assert!(!o.layout().gate_socket().exists());
}

#[test]
fn sigterm_with_calls_in_flight_loses_no_answered_call_and_leaves_a_verified_ledger() {
    let o = Owner::new();
    o.write("project/small.txt", b"x\n");
    let gate = GateProcess::start(&o, &[]);
    let endpoint = GateEndpoint::unix_in(&o.seam_home);
    let opener = seam_agent::gate_client::read_opener(&o.seam_home).unwrap();

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .unwrap();
    let (answered_tx, answered_rx) = std::sync::mpsc::channel::<usize>();
    let handles: Vec<_> = (0..16)
        .map(|_| {
            let endpoint = endpoint.clone();
            let tx = answered_tx.clone();
            let opener = opener.clone();
            runtime.spawn(async move {
                let mut c = GateClient::new(endpoint).with_opener(opener);
                let mut ids = Vec::new();
                // call until the gate goes away
                while let Ok(inv) = c
                    .invoke("files.read", json!({"path": "small.txt"}), None)
                    .await
                {
                    assert_eq!(inv.status, 200);
                    ids.push(inv.answer.invocation_id().to_owned());
                    let _ = tx.send(1);
                }
                ids
            })
        })
        .collect();
    drop(answered_tx);
    // let some calls through, then SIGTERM while the clients keep calling
    for _ in 0..200 {
        answered_rx.recv_timeout(Duration::from_secs(30)).unwrap();
    }
    gate.terminate();
    let mut answered = HashSet::new();
    for h in handles {
        answered.extend(runtime.block_on(h).unwrap());
    }
    let (code, lines) = gate.wait();
    assert_eq!(code, 0, "{lines:?}");
    assert!(
        lines.iter().any(|l| l.contains("SIGTERM: stopping")),
        "{lines:?}"
    );
    assert!(answered.len() >= 200);

    // every answered call is in the ledger, and the ledger verifies with its
    // head on the last record (no lag: verify fails on a head behind)
    let text = verify(&o);
    let recorded: HashSet<String> = ledger_ids(&o).into_iter().collect();
    for id in &answered {
        assert!(
            recorded.contains(id),
            "{id} was answered but is not in the ledger"
        );
    }
    assert!(
        text.contains(&format!("{} records", recorded.len())),
        "{text}"
    );
    let report = lines
        .iter()
        .find(|l| l.contains("gate stopped"))
        .unwrap()
        .clone();
    assert!(
        report.contains(&format!("{} calls answered", recorded.len())),
        "every recorded call was answered by the gate: {report}"
    );
}
