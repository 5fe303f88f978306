//! `ask` asks: `seam ask` in a real terminal (a tmux pane), against the replaying model
//! server, where a python.run step waits for the operator. The test reads the gate's prompt
//! off the pane and types the answer into it, as the operator would; then it reads the signed
//! ledger. And from inside the agent's walls, on that same terminal, the agent can neither
//! open /dev/tty nor type into the terminal it holds, nor answer over the gate's socket.

mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::replay::{ReplayServer, Reply};
use common::{Owner, ServiceGate};
use serde_json::Value;

/// A tmux server of this test's own (its own socket name), killed on drop.
struct Tmux {
    socket: String,
    session: String,
}

impl Tmux {
    /// Runs `script` (a shell script file) in a detached pane of a fresh tmux server.
    fn start(name: &str, script: &Path) -> Tmux {
        let socket = format!("seam-test-{}-{name}", std::process::id());
        let t = Tmux {
            socket,
            session: name.to_owned(),
        };
        let ok = t
            .tmux()
            .args(["new-session", "-d", "-x", "220", "-y", "60", "-s", name])
            .arg(format!("sh {}", script.display()))
            .status()
            .unwrap();
        assert!(ok.success(), "tmux new-session failed");
        t
    }

    fn tmux(&self) -> std::process::Command {
        let mut c = std::process::Command::new("tmux");
        c.args(["-L", &self.socket, "-f", "/dev/null"]);
        c
    }

    fn pane(&self) -> String {
        let out = self
            .tmux()
            .args([
                "capture-pane",
                "-p",
                "-J",
                "-S",
                "-200",
                "-t",
                &self.session,
            ])
            .output()
            .unwrap();
        String::from_utf8_lossy(&out.stdout).into_owned()
    }

    /// Waits until the pane shows `text` `times` times.
    fn wait_for(&self, text: &str, times: usize) -> String {
        let deadline = Instant::now() + Duration::from_secs(60);
        loop {
            let pane = self.pane();
            if pane.matches(text).count() >= times {
                return pane;
            }
            assert!(
                Instant::now() < deadline,
                "the pane never showed {text:?} ×{times}:\n{pane}"
            );
            std::thread::sleep(Duration::from_millis(50));
        }
    }

    fn type_line(&self, keys: &str) {
        let ok = self
            .tmux()
            .args(["send-keys", "-t", &self.session, "-l", keys])
            .status()
            .unwrap();
        assert!(ok.success());
        let ok = self
            .tmux()
            .args(["send-keys", "-t", &self.session, "Enter"])
            .status()
            .unwrap();
        assert!(ok.success());
    }
}

impl Drop for Tmux {
    fn drop(&mut self) {
        let _ = self.tmux().arg("kill-server").status();
    }
}

fn require_tmux() {
    let found = std::process::Command::new("tmux").arg("-V").output();
    assert!(
        found.is_ok_and(|o| o.status.success()),
        "these tests drive a real terminal with tmux: install it (apt-get install tmux)"
    );
}

fn sh_quote(s: &str) -> String {
    format!("'{}'", s.replace('\'', "'\\''"))
}

/// A script that runs `seam ARGS` as the owner, its stdout to `out`, its stderr on the
/// pane (where the operator reads it), and its exit code to `rc` when it ends.
fn script(owner: &Owner, name: &str, args: &[String]) -> (PathBuf, PathBuf, PathBuf) {
    let dir = owner.dir.path();
    let (out, rc, file) = (
        dir.join(format!("{name}.out")),
        dir.join(format!("{name}.rc")),
        dir.join(format!("{name}.sh")),
    );
    let seam = assert_cmd::cargo::cargo_bin("seam");
    let mut cmd = format!(
        "cd {} && env -i HOME={} SEAM_HOME={} PATH={} TERM=xterm {}",
        sh_quote(&owner.workspace.display().to_string()),
        sh_quote(&owner.home.display().to_string()),
        sh_quote(&owner.seam_home.display().to_string()),
        sh_quote(&std::env::var("PATH").unwrap_or_default()),
        sh_quote(&seam.display().to_string()),
    );
    for a in args {
        cmd.push(' ');
        cmd.push_str(&sh_quote(a));
    }
    let text = format!(
        "{cmd} > {out}\necho $? > {rc}.tmp && mv {rc}.tmp {rc}\nsleep 600\n",
        out = sh_quote(&out.display().to_string()),
        rc = sh_quote(&rc.display().to_string()),
    );
    std::fs::write(&file, text).unwrap();
    (file, out, rc)
}

fn wait_rc(rc: &Path, pane: impl Fn() -> String) -> i32 {
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        if let Ok(text) = std::fs::read_to_string(rc) {
            return text.trim().parse().unwrap();
        }
        assert!(Instant::now() < deadline, "never ended:\n{}", pane());
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// Every ledger record, after `seam ledger verify` passed.
fn ledger(owner: &Owner) -> Vec<Value> {
    let v = owner.seam().args(["ledger", "verify"]).output().unwrap();
    assert!(
        v.status.success(),
        "the ledger verifies: {}",
        String::from_utf8_lossy(&v.stderr)
    );
    let out = owner
        .seam()
        .args(["ledger", "export", "--json"])
        .output()
        .unwrap();
    String::from_utf8_lossy(&out.stdout)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// (tool, decision as the ledger's one-line label, code of a python.run call) for the
/// records of python.run.
fn python_records(records: &[Value]) -> Vec<(String, String)> {
    records
        .iter()
        .filter(|r| r["tool"] == "python.run")
        .map(|r| {
            let d = &r["decision"];
            let label = match d["kind"].as_str().unwrap() {
                "consent" => format!(
                    "consent {} {} {}",
                    d["answer"].as_str().unwrap(),
                    d["scope"].as_str().unwrap(),
                    d["by"]["via"].as_str().unwrap()
                ),
                "refused" => format!("refused {}", d["code"].as_str().unwrap()),
                other => other.to_owned(),
            };
            (r["params"]["code"].as_str().unwrap().to_owned(), label)
        })
        .collect()
}

fn action(code: &str) -> String {
    serde_json::json!({"mode": "action", "tool": "python.run", "params": {"code": code}})
        .to_string()
}

fn ask_args(server: &ReplayServer, extra: &[&str]) -> Vec<String> {
    let mut a: Vec<String> = ["ask", "add up the numbers with Python", "--model-url"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    a.push(server.url.clone());
    a.extend(extra.iter().map(|s| s.to_string()));
    a
}

fn leak(s: String) -> &'static str {
    Box::leak(s.into_boxed_str())
}

const PROMPT: &str = "allow? [y] once";

#[test]
fn yes_runs_the_call_it_names_and_the_next_call_with_other_params_asks_again() {
    require_tmux();
    let owner = Owner::new();
    let server = ReplayServer::start(vec![
        Reply::Text(leak(action("print(6*7)"))),
        Reply::Text(leak(action("print(1+2)"))),
        Reply::Text(leak(action("print(2+2)"))),
        Reply::Text("{\"mode\":\"respond\",\"text\":\"42, 3 and 4.\"}"),
    ]);
    let (file, out, rc) = script(&owner, "yes", &ask_args(&server, &[]));
    let tmux = Tmux::start("yes", &file);

    // the first call asks, showing the code in full and its digest; y allows it once
    let pane = tmux.wait_for(PROMPT, 1);
    assert!(
        pane.contains("python.run") && pane.contains("print(6*7)"),
        "{pane}"
    );
    let digest = seam_ledger::Sha256Digest::of(br#"{"code":"print(6*7)"}"#).to_string();
    assert!(pane.contains(&digest), "the digest of the params: {pane}");
    tmux.type_line("y");
    // the next call, other params: asked again (once covered only that call); t: the turn
    let pane = tmux.wait_for(PROMPT, 2);
    assert!(pane.contains("print(1+2)"), "{pane}");
    tmux.type_line("t");
    // the third is covered by the turn answer: no third prompt, the turn ends
    let code = wait_rc(&rc, || tmux.pane());
    let pane = tmux.pane();
    assert_eq!(code, 0, "{pane}");
    assert_eq!(pane.matches(PROMPT).count(), 2, "{pane}");
    assert_eq!(
        std::fs::read_to_string(&out).unwrap().trim(),
        "42, 3 and 4."
    );
    // the model saw the run's output
    let shown = server.requests()[1].to_string();
    assert!(shown.contains("42"), "{shown}");

    let records = ledger(&owner);
    assert_eq!(
        python_records(&records),
        [
            ("print(6*7)".into(), "consent granted once terminal".into()),
            ("print(6*7)".into(), "admitted".into()),
            ("print(1+2)".into(), "consent granted turn terminal".into()),
            ("print(1+2)".into(), "admitted".into()),
            ("print(2+2)".into(), "admitted".into()),
        ]
    );
    let consent = records
        .iter()
        .find(|r| r["decision"]["kind"] == "consent")
        .unwrap();
    assert_eq!(consent["params_sha256"], Value::from(digest));
    assert!(
        consent["decision"]["policy_digest"]
            .as_str()
            .unwrap()
            .starts_with("sha256:")
    );
    // seam ledger tail shows them
    let tail = owner
        .seam()
        .args(["ledger", "tail", "-n", "20"])
        .output()
        .unwrap();
    let tail = String::from_utf8_lossy(&tail.stdout);
    assert!(
        tail.contains("consent:granted/once by terminal")
            && tail.contains("consent:granted/turn by terminal"),
        "{tail}"
    );
}

#[test]
fn no_is_a_refusal_the_model_reads_and_a_signed_denial() {
    require_tmux();
    let owner = Owner::new();
    let server = ReplayServer::start(vec![
        Reply::Text(leak(action("import os; print(os.getcwd())"))),
        Reply::Text("{\"mode\":\"respond\",\"text\":\"The operator said no.\"}"),
    ]);
    let (file, out, rc) = script(&owner, "no", &ask_args(&server, &[]));
    let tmux = Tmux::start("no", &file);
    tmux.wait_for(PROMPT, 1);
    tmux.type_line("n");
    let code = wait_rc(&rc, || tmux.pane());
    assert_eq!(code, 0, "{}", tmux.pane());
    assert_eq!(
        std::fs::read_to_string(&out).unwrap().trim(),
        "The operator said no."
    );
    // the model was told, in a sentence, and carried on (one step, not a lost budget)
    let shown = server.requests()[1].to_string();
    assert!(
        shown.contains("python.run was refused") && shown.contains("said no"),
        "{shown}"
    );
    assert_eq!(
        python_records(&ledger(&owner)),
        [
            (
                "import os; print(os.getcwd())".into(),
                "consent denied once terminal".into()
            ),
            (
                "import os; print(os.getcwd())".into(),
                "refused consent_denied".into()
            ),
        ]
    );
}

#[test]
fn no_answer_in_time_is_refused_saying_how_to_allow_it() {
    require_tmux();
    let owner = Owner::new();
    let server = ReplayServer::start(vec![
        Reply::Text(leak(action("print(sum(range(10)))"))),
        Reply::Text("{\"mode\":\"respond\",\"text\":\"Nobody allowed it.\"}"),
    ]);
    let (file, _out, rc) = script(
        &owner,
        "late",
        &ask_args(&server, &["--consent-timeout", "2"]),
    );
    let tmux = Tmux::start("late", &file);
    tmux.wait_for(PROMPT, 1);
    let code = wait_rc(&rc, || tmux.pane());
    assert_eq!(code, 0, "{}", tmux.pane());
    assert!(
        tmux.pane().contains("no answer within 2 s"),
        "{}",
        tmux.pane()
    );
    let shown = server.requests()[1].to_string();
    assert!(
        shown.contains("nobody answered within 2 s") && shown.contains("[consent] always"),
        "{shown}"
    );
    assert_eq!(
        python_records(&ledger(&owner)),
        [
            (
                "print(sum(range(10)))".into(),
                "consent timed_out once nobody".into()
            ),
            (
                "print(sum(range(10)))".into(),
                "refused consent_required".into()
            ),
        ]
    );
}

#[test]
fn always_writes_a_rule_that_policy_show_shows_and_the_next_turn_does_not_ask() {
    require_tmux();
    let owner = Owner::new();
    let server = ReplayServer::start(vec![
        Reply::Text(leak(action("print(1)"))),
        Reply::Text("{\"mode\":\"respond\",\"text\":\"1\"}"),
        Reply::Text(leak(action("print(2)"))),
        Reply::Text("{\"mode\":\"respond\",\"text\":\"2\"}"),
    ]);
    let (file, _out, rc) = script(&owner, "always", &ask_args(&server, &[]));
    let tmux = Tmux::start("always", &file);
    tmux.wait_for(PROMPT, 1);
    tmux.type_line("a");
    assert_eq!(wait_rc(&rc, || tmux.pane()), 0, "{}", tmux.pane());
    let shown = owner.seam().args(["policy", "show"]).output().unwrap();
    let shown = String::from_utf8_lossy(&shown.stdout);
    assert!(shown.contains("python.run  always"), "{shown}");
    assert!(
        shown.contains("policy.toml"),
        "the rule's file is in force: {shown}"
    );
    // the next turn runs python.run without a prompt (no terminal at all here)
    let out = owner
        .seam()
        .args(ask_args(&server, &[]))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(String::from_utf8_lossy(&out.stdout).trim(), "2");
    assert_eq!(
        python_records(&ledger(&owner)),
        [
            ("print(1)".into(), "consent granted always terminal".into()),
            ("print(1)".into(), "admitted".into()),
            ("print(2)".into(), "admitted".into()),
        ]
    );
}

#[test]
fn without_a_terminal_ask_refuses_at_once() {
    let owner = Owner::new();
    let server = ReplayServer::start(vec![
        Reply::Text(leak(action("print(3)"))),
        Reply::Text("{\"mode\":\"respond\",\"text\":\"Not allowed.\"}"),
    ]);
    let t = Instant::now();
    let out = owner
        .seam()
        .args(ask_args(&server, &[]))
        .timeout(Duration::from_secs(60))
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(
        t.elapsed() < Duration::from_secs(60),
        "it did not wait 120 s"
    );
    let shown = server.requests()[1].to_string();
    assert!(
        shown.contains("nobody to ask") && shown.contains("[consent] always"),
        "{shown}"
    );
}

/// From inside the agent's walls, on the operator's terminal: /dev/tty cannot be opened,
/// nothing can be typed into the terminal the agent holds on its stdin and stderr, and the
/// gate's consent endpoints refuse it.
#[test]
fn the_confined_agent_cannot_reach_the_operators_terminal_or_answer_for_the_operator() {
    require_tmux();
    let owner = Owner::new();
    let args: Vec<String> = ["__agent-attack", "--tty", "--consent-approve"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    let (file, out, rc) = script(&owner, "attack", &args);
    let tmux = Tmux::start("attack", &file);
    assert_eq!(wait_rc(&rc, || tmux.pane()), 0, "{}", tmux.pane());
    let report: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let attempt = |kind: &str, target: &str| -> Value {
        report["attempts"]
            .as_array()
            .unwrap()
            .iter()
            .find(|a| a["attack"] == kind && a["target"] == target)
            .cloned()
            .unwrap_or_else(|| panic!("no {kind} {target}: {report}"))
    };
    let open = attempt("open-tty", "/dev/tty");
    assert_eq!(open["errno"], 13, "Landlock refuses /dev/tty: {open}");
    for fd in ["stdin", "stderr"] {
        let typed = attempt("type-into-terminal", fd);
        assert_eq!(
            typed["errno"], 1,
            "seccomp refuses TIOCSTI on {fd}: {typed}"
        );
    }
    // nothing was typed: the pane shows no stray "y" line after the report
    let t = &report["turn_attacks"];
    assert_eq!(t["read_opener"]["denied"], true, "{t}");
    let approve = t["consent_approve no_opener"].to_string();
    assert!(
        approve.contains("403") && approve.contains("turn opener"),
        "{approve}"
    );
    assert!(
        t["consent_list no_opener"].to_string().contains("403"),
        "{t}"
    );
}

/// A gate run as a service asks nobody on a terminal: `seam consent` lists the waiting call
/// and approves it over the socket, `seam watch` shows it, and the ledger names the socket
/// peer's uid.
#[test]
fn a_service_gate_is_answered_with_seam_consent_over_its_socket() {
    let owner = Owner::new();
    let gate = ServiceGate::start(&owner);
    let deadline = Instant::now() + Duration::from_secs(30);
    let call = owner
        .seam_process()
        .args([
            "invoke",
            "--gate",
            "python.run",
            r#"{"code": "print(6*7)"}"#,
        ])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    // it waits: listed, and shown by seam watch
    let pending = loop {
        let out = owner
            .seam()
            .args(["consent", "list", "--json"])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let list: Vec<Value> = serde_json::from_slice(&out.stdout).unwrap();
        if let Some(p) = list.first() {
            break p.clone();
        }
        assert!(Instant::now() < deadline, "nothing came to wait");
        std::thread::sleep(Duration::from_millis(50));
    };
    assert_eq!(pending["tool"], "python.run");
    assert_eq!(pending["params"]["code"], "print(6*7)");
    let id = pending["id"].as_str().unwrap().to_owned();
    let watch = owner
        .seam()
        .args(["watch", "--plain", "--once"])
        .output()
        .unwrap();
    let watch = String::from_utf8_lossy(&watch.stdout);
    assert!(
        watch.contains(&format!("consent waiting {id} python.run")),
        "{watch}"
    );
    let text = owner.seam().args(["consent", "list"]).output().unwrap();
    assert!(String::from_utf8_lossy(&text.stdout).contains("print(6*7)"));

    let approved = owner
        .seam()
        .args(["consent", "approve", &id])
        .output()
        .unwrap();
    assert!(
        approved.status.success(),
        "{}",
        String::from_utf8_lossy(&approved.stderr)
    );
    let done = call.wait_with_output().unwrap();
    assert!(
        done.status.success(),
        "{}",
        String::from_utf8_lossy(&done.stderr)
    );
    let answer: Value = serde_json::from_slice(&done.stdout).unwrap();
    assert_eq!(answer["output"]["stdout"], "42\n");
    // a second answer to the same call names nothing
    let again = owner
        .seam()
        .args(["consent", "deny", &id])
        .output()
        .unwrap();
    assert!(!again.status.success());

    drop(gate);
    let records = ledger(&owner);
    let consent = records
        .iter()
        .find(|r| r["decision"]["kind"] == "consent")
        .expect("a consent record");
    assert_eq!(consent["invocation_id"], Value::from(id));
    assert_eq!(consent["decision"]["answer"], "granted");
    assert_eq!(consent["decision"]["by"]["via"], "socket");
    assert_eq!(
        consent["decision"]["by"]["uid"],
        Value::from(rustix::process::geteuid().as_raw())
    );
}
