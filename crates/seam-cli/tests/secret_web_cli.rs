//! `seam secret`, the gate's config file, and web.search / facts.get through `seam invoke`.

mod common;

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::mpsc;
use std::time::{Duration, Instant};

use common::Owner;
use seam_test_support::http::{Reply, Server};
use serde_json::{Value, json};

const KEY: &str = "BSAq8Xz7Lm2Np4Rt6Vw9Yb1Cd3Fg5Hj";

fn run(o: &Owner, args: &[&str], stdin: &str) -> (i32, String, String) {
    let out = o.seam().args(args).write_stdin(stdin).output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn secrets_file(o: &Owner) -> PathBuf {
    o.layout().keys().join(seam_keeper::SECRETS_FILE)
}

#[test]
fn set_reads_stdin_list_shows_names_only_rm_removes() {
    let o = Owner::new();
    let (code, stdout, stderr) = run(&o, &["secret", "set", "brave"], &format!("{KEY}\n"));
    assert_eq!(code, 0, "{stderr}");
    assert!(stdout.is_empty());
    assert!(stderr.contains("stored secret \"brave\""), "{stderr}");
    assert!(stderr.contains("keeper:brave"), "{stderr}");
    assert!(!stderr.contains(KEY));
    let file = secrets_file(&o);
    assert_eq!(
        std::fs::metadata(&file).unwrap().permissions().mode() & 0o777,
        0o600
    );
    // The trailing newline of the piped value is not part of it.
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains(&format!("brave = \"{KEY}\"\n")), "{text}");

    run(&o, &["secret", "set", "searx"], "another-value-123");
    let (code, stdout, stderr) = run(&o, &["secret", "list"], "");
    assert_eq!(code, 0, "{stderr}");
    assert_eq!(stdout, "brave\nsearx\n");
    let (_, stdout, _) = run(&o, &["secret", "list", "--json"], "");
    assert_eq!(
        serde_json::from_str::<Value>(&stdout).unwrap(),
        json!(["brave", "searx"])
    );
    for out in [&stdout, &stderr] {
        assert!(!out.contains(KEY) && !out.contains("another-value"));
    }

    let (code, _, stderr) = run(&o, &["secret", "set", "brave"], "replacement-value");
    assert_eq!(code, 0);
    assert!(stderr.contains("replaced"), "{stderr}");

    let (code, _, _) = run(&o, &["secret", "rm", "brave"], "");
    assert_eq!(code, 0);
    let (_, stdout, _) = run(&o, &["secret", "list"], "");
    assert_eq!(stdout, "searx\n");
    let (code, _, stderr) = run(&o, &["secret", "rm", "brave"], "");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no secret named \"brave\""), "{stderr}");
}

#[test]
fn files_read_cannot_read_the_keepers_file() {
    let o = Owner::new();
    run(&o, &["secret", "set", "brave"], KEY);
    let path = secrets_file(&o);
    let (code, stdout, _) = run(
        &o,
        &[
            "invoke",
            "files.read",
            &json!({"path": path.to_str().unwrap()}).to_string(),
        ],
        "",
    );
    assert_eq!(code, 3, "{stdout}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["refused"]["code"], "protected", "{v}");
    assert!(!stdout.contains(KEY));
}

#[test]
fn a_value_on_the_command_line_is_refused_and_not_repeated() {
    let o = Owner::new();
    let (code, stdout, stderr) = run(&o, &["secret", "set", "brave", KEY], "");
    assert_eq!(code, 2);
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY), "{stderr}");
    assert!(stderr.contains("from stdin"), "{stderr}");
    assert!(stderr.contains("rotate"), "{stderr}");
    assert!(!secrets_file(&o).exists(), "nothing was stored");
    let (code, _, stderr) = run(&o, &["secret", "set", "brave", "--", "--x"], "");
    assert_eq!(code, 2, "{stderr}");
}

#[test]
fn bad_names_empty_and_short_values_are_usage_errors() {
    let o = Owner::new();
    let (code, _, stderr) = run(&o, &["secret", "set", "a/b"], KEY);
    assert_eq!(code, 2, "{stderr}");
    let (code, _, stderr) = run(&o, &["secret", "set", "k"], "");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("no value"), "{stderr}");
    let (code, _, stderr) = run(&o, &["secret", "set", "k"], "abc\n");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("too short"), "{stderr}");
    assert!(!stderr.contains("abc"), "{stderr}");
}

#[test]
fn a_keeper_file_others_can_read_stops_every_command_that_builds_the_gate() {
    let o = Owner::new();
    run(&o, &["secret", "set", "brave"], KEY);
    std::fs::set_permissions(secrets_file(&o), std::fs::Permissions::from_mode(0o644)).unwrap();
    for args in [
        &["secret", "list"][..],
        &["invoke", "facts.get", r#"{"fact":"arch"}"#][..],
    ] {
        let (code, stdout, stderr) = run(&o, args, "");
        assert_eq!(code, 1, "{args:?}: {stderr}");
        assert!(stderr.contains("chmod 600"), "{stderr}");
        assert!(!stdout.contains(KEY) && !stderr.contains(KEY));
    }
}

/// `seam secret set` on a terminal: the value typed is not echoed.
#[test]
fn on_a_terminal_the_value_is_not_echoed() {
    use rustix::pty::{OpenptFlags, grantpt, openpt, ptsname, unlockpt};
    let o = Owner::new();
    let master = openpt(OpenptFlags::RDWR | OpenptFlags::NOCTTY).unwrap();
    grantpt(&master).unwrap();
    unlockpt(&master).unwrap();
    let name = ptsname(&master, Vec::new()).unwrap();
    let slave = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open(name.to_str().unwrap())
        .unwrap();
    let mut child = std::process::Command::new(assert_cmd::cargo::cargo_bin("seam"))
        .args(["secret", "set", "typed"])
        .env_clear()
        .env("HOME", &o.home)
        .env("SEAM_HOME", &o.seam_home)
        .current_dir(&o.workspace)
        .stdin(slave.try_clone().unwrap())
        .stdout(slave.try_clone().unwrap())
        .stderr(slave)
        .spawn()
        .unwrap();
    let master = std::fs::File::from(master);
    let mut writer = master.try_clone().unwrap();
    let (tx, rx) = mpsc::channel::<Vec<u8>>();
    std::thread::spawn(move || {
        let mut r = master;
        let mut buf = [0u8; 1024];
        // Ends with EIO once the child has closed the terminal.
        while let Ok(n) = r.read(&mut buf) {
            if n == 0 || tx.send(buf[..n].to_vec()).is_err() {
                break;
            }
        }
    });
    let mut seen = Vec::new();
    let deadline = Instant::now() + Duration::from_secs(20);
    while !String::from_utf8_lossy(&seen).contains("not shown as you type") {
        assert!(Instant::now() < deadline, "no prompt: {seen:?}");
        if let Ok(chunk) = rx.recv_timeout(Duration::from_millis(100)) {
            seen.extend(chunk);
        }
    }
    writer.write_all(b"typed-secret-value-42\n").unwrap();
    let status = child.wait().unwrap();
    while let Ok(chunk) = rx.recv_timeout(Duration::from_millis(300)) {
        seen.extend(chunk);
    }
    let shown = String::from_utf8_lossy(&seen);
    assert!(status.success(), "{shown}");
    assert!(!shown.contains("typed-secret-value"), "echoed: {shown}");
    assert!(shown.contains("stored secret \"typed\""), "{shown}");
    let text = std::fs::read_to_string(secrets_file(&o)).unwrap();
    assert!(text.contains("typed = \"typed-secret-value-42\""), "{text}");
}

#[test]
fn the_config_file_is_strict_and_errors_name_the_line() {
    let o = Owner::new();
    let config = o.dir.path().join("gate.toml");
    std::fs::write(
        &config,
        "[web]\nbackend = \"searxng\"\nurl = \"http://127.0.0.1:8888\"\nmax_reslts = 3\n",
    )
    .unwrap();
    let (code, _, stderr) = run(&o, &["--config", config.to_str().unwrap(), "tools"], "");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("gate.toml, line 4"), "{stderr}");
    assert!(stderr.contains("max_reslts"), "{stderr}");
    assert!(stderr.contains("did you mean \"max_results\""), "{stderr}");

    // config.toml in seam's home is the default.
    std::fs::write(o.layout().gate_config(), "[wbe]\n").unwrap();
    let (code, _, stderr) = run(&o, &["tools"], "");
    assert_eq!(code, 2, "{stderr}");
    assert!(stderr.contains("config.toml, line 1"), "{stderr}");
    // SEAM_CONFIG names another file.
    std::fs::write(&config, "").unwrap();
    let out = o
        .seam()
        .env("SEAM_CONFIG", &config)
        .args(["tools"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
}

/// A Brave-shaped server: answers every request with one result whose snippet echoes the
/// token it was sent; it keeps the requests.
fn echoing_brave() -> Server {
    Server::start(|seen| {
        let token = seen.header("x-subscription-token").unwrap_or_default();
        Reply::json(
            200,
            &json!({"type": "search", "web": {"type": "search", "results": [
                {"title": "Echo", "url": "https://echo.example/",
                 "description": format!("token {token} seen")}
            ]}}),
        )
    })
}

#[test]
fn invoke_web_search_uses_the_keepers_key_and_redacts_it_by_identity() {
    let o = Owner::new();
    run(&o, &["secret", "set", "brave"], KEY);
    let brave = echoing_brave();
    let port = brave.addr.port();
    std::fs::write(
        o.layout().gate_config(),
        format!(
            "[web]\nbackend = \"brave\"\napi_key = \"keeper:brave\"\nurl = \"http://127.0.0.1:{port}/res/v1/web/search\"\n"
        ),
    )
    .unwrap();
    let policy = o.policy("[capabilities]\n\"web.search\" = \"allow\"\n");
    let (code, stdout, stderr) = run(
        &o,
        &[
            "--policy",
            policy.to_str().unwrap(),
            "invoke",
            "web.search",
            r#"{"query": "who am i"}"#,
        ],
        "",
    );
    assert_eq!(code, 0, "{stdout}{stderr}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(
        v["output"]["results"][0]["snippet"],
        "token [REDACTED:known-value] seen"
    );
    assert_eq!(v["scrubbed"], json!(["known-value"]));
    assert_eq!(v["tainted"], true);
    let head = brave.seen()[0].head.clone();
    assert!(head.contains(KEY), "the key was injected at egress");
    assert!(
        head.starts_with("GET /res/v1/web/search?q=who+am+i"),
        "{head}"
    );
    assert!(!stdout.contains(KEY) && !stderr.contains(KEY));

    // The ledger holds no trace of it either.
    let (_, export, _) = run(&o, &["ledger", "export", "--json"], "");
    assert!(export.contains("web.search"), "{export}");
    assert!(!export.contains(KEY));
}

#[test]
fn invoke_web_search_without_a_backend_says_how_to_configure_one() {
    let o = Owner::new();
    let policy = o.policy("[capabilities]\n\"web.search\" = \"allow\"\n");
    let (code, stdout, _) = run(
        &o,
        &[
            "--policy",
            policy.to_str().unwrap(),
            "invoke",
            "web.search",
            r#"{"query": "x"}"#,
        ],
        "",
    );
    assert_eq!(code, 3);
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["refused"]["code"], "tool_failed");
    assert!(
        v["refused"]["message"]
            .as_str()
            .unwrap()
            .contains("config.toml in seam's home"),
        "{v}"
    );
}

#[test]
fn invoke_facts_get_and_its_enum() {
    let o = Owner::new();
    let (code, stdout, _) = run(&o, &["invoke", "facts.get", r#"{"fact": "arch"}"#], "");
    assert_eq!(code, 0, "{stdout}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["output"]["fact"], "arch");
    assert_eq!(v["output"]["value"], std::env::consts::ARCH);
    // The machine's other identity facts come beside it.
    let also = v["output"]["also"].as_object().unwrap();
    let mut names: Vec<&str> = also.keys().map(String::as_str).collect();
    names.sort_unstable();
    assert_eq!(names, ["hostname", "kernel", "os"], "{v}");
    assert_eq!(v["tainted"], false);
    let (code, stdout, _) = run(
        &o,
        &["invoke", "facts.get", r#"{"fact": "/etc/hostname"}"#],
        "",
    );
    assert_eq!(code, 2, "{stdout}");
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["refused"]["code"], "invalid_params");

    // The digest is of the policy `policy show --json` prints.
    let (_, stdout, _) = run(
        &o,
        &["invoke", "facts.get", r#"{"fact": "policy_digest"}"#],
        "",
    );
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert!(
        v["output"]["value"]
            .as_str()
            .unwrap()
            .starts_with("sha256:"),
        "{v}"
    );
    let (_, tools, _) = run(&o, &["tools"], "");
    assert!(
        tools.contains("facts.get") && tools.contains("web.search"),
        "{tools}"
    );
}

#[test]
fn policy_show_says_which_taint_egress_is_in_force() {
    let o = Owner::new();
    let (_, stdout, _) = run(&o, &["policy", "show"], "");
    assert!(stdout.contains("egress             deny"), "{stdout}");
    let p = o.policy("[taint]\negress = \"allow\"\n");
    let (_, stdout, _) = run(&o, &["--policy", p.to_str().unwrap(), "policy", "show"], "");
    assert!(stdout.contains("egress             allow"), "{stdout}");
    let (_, stdout, _) = run(
        &o,
        &["--policy", p.to_str().unwrap(), "policy", "show", "--json"],
        "",
    );
    let v: Value = serde_json::from_str(&stdout).unwrap();
    assert_eq!(v["taint"]["egress"], "allow");
}
