//! The `/v1` endpoints through a real gate on a real socket: statuses and bodies.

mod service_support;

use std::os::unix::fs::{FileTypeExt, PermissionsExt};
use std::time::Duration;

use seam_home::SeamHome;
use serde_json::json;
use service_support::{Conn, TestGate, Via, send};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn health_tools_and_an_envelope_over_the_unix_socket() {
    let gate = TestGate::start(|_| {}).await;
    let meta = std::fs::symlink_metadata(&gate.socket).unwrap();
    assert!(meta.file_type().is_socket());
    assert_eq!(
        meta.permissions().mode() & 0o777,
        0o600,
        "owner-only socket"
    );

    let h = send(&gate.unix(), "GET", "/v1/health", &[], "").await;
    assert_eq!(h.status, 200);
    assert_eq!(h.json()["status"], "ok");
    assert_eq!(h.json()["tools"], 4);

    let t = send(&gate.unix(), "GET", "/v1/tools", &[], "").await;
    assert_eq!(t.status, 200);
    let names: Vec<String> = t
        .json()
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_owned())
        .collect();
    assert_eq!(
        names,
        ["files.read", "test.act", "test.egress", "test.slow"]
    );
    assert_eq!(
        t.json()[0]["input_schema"]["additionalProperties"],
        json!(false)
    );

    gate.write("notes.txt", b"hello gate\n");
    let mut c = Conn::open(&gate.unix()).await.unwrap();
    let r = c
        .invoke("files.read", json!({"path": "notes.txt"}), None)
        .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    let v = r.json();
    let mut keys: Vec<&str> = v.as_object().unwrap().keys().map(String::as_str).collect();
    keys.sort_unstable();
    assert_eq!(
        keys,
        [
            "invocation_id",
            "output",
            "scrubbed",
            "tainted",
            "tool",
            "version"
        ],
        "exactly the envelope of DESIGN.md"
    );
    assert!(v["output"].to_string().contains("hello gate"));
    assert_eq!(v["tainted"], true);
    // a call without a turn ran in a one-call turn the gate opened and closed
    let turn = r.header("seam-turn").unwrap().to_owned();
    assert!(turn.starts_with("turn-"), "{turn}");
    assert_eq!(r.header("seam-turn-tainted"), Some("true"));
    let closed = c
        .send("GET", &format!("/v1/turns/{turn}"), &[], "")
        .await
        .unwrap();
    assert_eq!(
        closed.status, 404,
        "the one-call turn is closed after its call"
    );

    let invocation = v["invocation_id"].as_str().unwrap().to_owned();
    let stopped = gate.stop().await;
    assert!(
        !stopped.socket.exists(),
        "the socket is removed on shutdown"
    );
    assert_eq!(stopped.records.len(), 1);
    assert_eq!(stopped.records[0].entry.invocation_id, invocation);
    assert_eq!(stopped.records[0].entry.turn_id.as_deref(), Some(&*turn));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn invalid_params_are_400_with_the_schema_errors_and_unknown_tools_404() {
    let gate = TestGate::start(|_| {}).await;
    let mut c = Conn::open(&gate.unix()).await.unwrap();

    let r = c
        .invoke("files.read", json!({"path": "a.txt", "mode": "x"}), None)
        .await;
    assert_eq!(r.status, 400);
    let v = r.json();
    assert_eq!(v["refused"]["code"], "invalid_params");
    let msg = v["refused"]["message"].as_str().unwrap();
    assert!(msg.contains("do not match its schema"), "{msg}");
    assert!(
        msg.contains("mode"),
        "the schema error names the field: {msg}"
    );
    assert!(v["invocation_id"].is_string());

    let r = c.invoke("files.read", json!({}), None).await;
    assert_eq!(r.status, 400);
    assert!(
        r.json()["refused"]["message"]
            .as_str()
            .unwrap()
            .contains("path"),
        "a missing required field is named"
    );

    let r = c.invoke("files.write", json!({"path": "x"}), None).await;
    assert_eq!(r.status, 404);
    assert_eq!(r.json()["refused"]["code"], "unknown_tool");
    assert!(
        r.json()["refused"]["message"]
            .as_str()
            .unwrap()
            .contains("files.read")
    );

    // not an invoke request at all: 400 with {"error"}, nothing governed
    for body in [
        "not json",
        r#"{"tool":"files.read"}"#,
        r#"{"tool":"files.read","params":{},"extra":1}"#,
    ] {
        let r = c.send("POST", "/v1/invoke", &[], body).await.unwrap();
        assert_eq!(r.status, 400, "{body}");
        assert!(
            r.json()["error"]
                .as_str()
                .unwrap()
                .contains("invoke request")
        );
    }

    // a policy refusal: 403 with the refusal JSON
    let r = c
        .invoke("files.read", json!({"path": "/etc/hostname"}), None)
        .await;
    assert_eq!(r.status, 403, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["refused"]["code"], "not_allowed");
    // a well-formed call the tool cannot carry out: 422
    let r = c
        .invoke("files.read", json!({"path": "missing.txt"}), None)
        .await;
    assert_eq!(r.status, 422);
    assert_eq!(r.json()["refused"]["code"], "not_found");

    let r = c.send("GET", "/v1/nothing", &[], "").await.unwrap();
    assert_eq!(r.status, 404);
    assert!(r.json()["error"].is_string());

    let stopped = gate.stop().await;
    // every governed call is recorded, refusals too; the malformed bodies are not calls
    assert_eq!(stopped.records.len(), 5);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn an_oversized_body_is_413() {
    let gate = TestGate::start(|o| o.limits.max_body_bytes = 4096).await;
    let big = json!({"tool": "files.read", "params": {"path": "x".repeat(5000)}}).to_string();
    let r = send(&gate.unix(), "POST", "/v1/invoke", &[], big.clone()).await;
    assert_eq!(r.status, 413);
    assert!(r.json()["error"].as_str().unwrap().contains("4096 bytes"));

    // the same without a Content-Length (chunked): cut off at the limit
    let mut c = Conn::open(&gate.unix()).await.unwrap();
    let r = c
        .send(
            "POST",
            "/v1/invoke",
            &[("transfer-encoding", "chunked")],
            big,
        )
        .await
        .unwrap();
    assert_eq!(r.status, 413);

    // just under the limit is served
    let ok = json!({"tool": "files.read", "params": {"path": "x".repeat(3000)}}).to_string();
    let r = send(&gate.unix(), "POST", "/v1/invoke", &[], ok).await;
    assert_ne!(r.status, 413);
    let stopped = gate.stop().await;
    assert_eq!(stopped.records.len(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_default_limit_is_one_mebibyte() {
    let gate = TestGate::start(|_| {}).await;
    let big = json!({"tool": "files.read", "params": {"path": "x".repeat(1024 * 1024)}});
    let r = send(&gate.unix(), "POST", "/v1/invoke", &[], big.to_string()).await;
    assert_eq!(r.status, 413);
    gate.stop().await;
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn tcp_needs_the_bearer_token() {
    let gate = TestGate::start(|o| o.tcp = Some("127.0.0.1:0".parse().unwrap())).await;
    let addr = gate.tcp.unwrap();
    let mode = std::fs::metadata(&gate.token_path)
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600, "the token file is owner-only");
    let token = gate.token();
    assert_eq!(token.len(), 64);
    let tcp = Via::Tcp(addr);

    let none = send(&tcp, "GET", "/v1/health", &[], "").await;
    assert_eq!(none.status, 401);
    assert_eq!(none.header("www-authenticate"), Some("Bearer"));
    assert!(none.json()["error"].as_str().unwrap().contains("Bearer"));

    let mut wrong = token.clone().into_bytes();
    wrong[10] = if wrong[10] == b'a' { b'b' } else { b'a' };
    let wrong = format!("Bearer {}", String::from_utf8(wrong).unwrap());
    for auth in [
        wrong.as_str(),
        "Bearer ",
        "Basic Zm9vOmJhcg==",
        token.as_str(),
    ] {
        let r = send(&tcp, "GET", "/v1/health", &[("authorization", auth)], "").await;
        assert_eq!(r.status, 401, "{auth}");
    }
    // an invoke without the token is not governed, so not recorded
    let r = send(
        &tcp,
        "POST",
        "/v1/invoke",
        &[],
        json!({"tool":"files.read","params":{"path":"a"}}).to_string(),
    )
    .await;
    assert_eq!(r.status, 401);

    let good = format!("Bearer {token}");
    let r = send(&tcp, "GET", "/v1/health", &[("authorization", &good)], "").await;
    assert_eq!(r.status, 200);
    gate.write("a.txt", b"a\n");
    let call = json!({"tool":"files.read","params":{"path":"a.txt"}}).to_string();
    let r = send(
        &tcp,
        "POST",
        "/v1/invoke",
        &[("authorization", &good)],
        call.clone(),
    )
    .await;
    assert_eq!(
        r.status, 400,
        "the token alone opens no turn (the agent holds it)"
    );
    assert_eq!(r.json()["refused"]["code"], "unknown_turn");
    let opener = std::fs::read_to_string(SeamHome::new(&gate.seam_home).turn_opener()).unwrap();
    let r = send(
        &tcp,
        "POST",
        "/v1/invoke",
        &[
            ("authorization", &good),
            ("seam-turn-opener", opener.trim()),
        ],
        call,
    )
    .await;
    assert_eq!(r.status, 200);

    // the unix socket needs no token: the socket's mode and the peer's uid guard it
    let r = send(&gate.unix(), "GET", "/v1/health", &[], "").await;
    assert_eq!(r.status, 200);
    let stopped = gate.stop().await;
    assert_eq!(stopped.records.len(), 2, "the refusal is recorded too");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_non_loopback_address_is_refused_unless_allowed() {
    let (_dir, seam_home, _project, env) = service_support::layout();
    let toolbox = std::sync::Arc::new(
        seam_gate::Toolbox::with_tools(
            std::sync::Arc::new(seam_policy::Policy::builtin(env)),
            std::sync::Arc::new(seam_scrub::Scrubber::new()),
            std::sync::Arc::new(seam_gate::NoLedger),
            service_support::tools(),
        )
        .unwrap()
        .requiring_open_turns(),
    );
    let mut opts = seam_gate::service::ServiceOptions::new(&seam_home);
    opts.tcp = Some("0.0.0.0:0".parse().unwrap());
    let err = seam_gate::service::GateService::new(toolbox.clone(), opts.clone())
        .bind()
        .await
        .unwrap_err();
    assert!(matches!(
        err,
        seam_gate::service::ServiceError::NonLoopback { .. }
    ));
    assert!(err.to_string().contains("--allow-non-loopback"), "{err}");
    assert!(
        !SeamHome::new(&seam_home).gate_socket().exists(),
        "nothing is left listening after the refusal"
    );

    opts.allow_non_loopback = true;
    let bound = seam_gate::service::GateService::new(toolbox, opts)
        .bind()
        .await
        .unwrap();
    assert!(bound.non_loopback());
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_toolbox_that_does_not_keep_turns_is_not_served() {
    let (_dir, seam_home, _project, env) = service_support::layout();
    let toolbox = std::sync::Arc::new(
        seam_gate::Toolbox::with_tools(
            std::sync::Arc::new(seam_policy::Policy::builtin(env)),
            std::sync::Arc::new(seam_scrub::Scrubber::new()),
            std::sync::Arc::new(seam_gate::NoLedger),
            service_support::tools(),
        )
        .unwrap(),
    );
    let err = seam_gate::service::GateService::new(
        toolbox,
        seam_gate::service::ServiceOptions::new(&seam_home),
    )
    .bind()
    .await
    .unwrap_err();
    assert!(matches!(
        err,
        seam_gate::service::ServiceError::TurnsNotRequired
    ));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_second_gate_is_refused_and_a_stale_socket_is_replaced() {
    let gate = TestGate::start(|_| {}).await;
    // a second gate on the same home, while the first listens
    let (_d, _h, _p, env) = service_support::layout();
    let toolbox = std::sync::Arc::new(
        seam_gate::Toolbox::with_tools(
            std::sync::Arc::new(seam_policy::Policy::builtin(env)),
            std::sync::Arc::new(seam_scrub::Scrubber::new()),
            std::sync::Arc::new(seam_gate::NoLedger),
            service_support::tools(),
        )
        .unwrap()
        .requiring_open_turns(),
    );
    let err = seam_gate::service::GateService::new(
        toolbox.clone(),
        seam_gate::service::ServiceOptions::new(&gate.seam_home),
    )
    .bind()
    .await
    .unwrap_err();
    assert!(
        matches!(
            err,
            seam_gate::service::ServiceError::AlreadyListening { .. }
        ),
        "{err}"
    );
    // the first still answers
    let r = send(&gate.unix(), "GET", "/v1/health", &[], "").await;
    assert_eq!(r.status, 200);
    let home = gate.seam_home.clone();
    let socket = SeamHome::new(&home).gate_socket();
    let stopped = gate.stop().await;

    // a stale socket (bound, nobody listening) is replaced
    let stale = std::os::unix::net::UnixListener::bind(&socket).unwrap();
    drop(stale);
    assert!(socket.exists());
    let bound = seam_gate::service::GateService::new(
        toolbox.clone(),
        seam_gate::service::ServiceOptions::new(&home),
    )
    .bind()
    .await
    .unwrap();
    drop(bound);
    // a regular file where the socket goes is not ours to remove
    std::fs::remove_file(&socket).unwrap();
    std::fs::write(&socket, b"keep me").unwrap();
    let err = seam_gate::service::GateService::new(
        toolbox,
        seam_gate::service::ServiceOptions::new(&home),
    )
    .bind()
    .await
    .unwrap_err();
    assert!(
        matches!(err, seam_gate::service::ServiceError::NotASocket { .. }),
        "{err}"
    );
    assert_eq!(std::fs::read(&socket).unwrap(), b"keep me");
    drop(stopped);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_call_over_the_timeout_is_504_and_still_recorded() {
    let gate = TestGate::start(|o| o.limits.call_timeout = Duration::from_millis(1500)).await;
    let mut c = Conn::open(&gate.unix()).await.unwrap();
    let r = c.invoke("test.slow", json!({"ms": 4000}), None).await;
    assert_eq!(r.status, 504);
    let v = r.json();
    assert_eq!(v["refused"]["code"], "timed_out");
    let msg = v["refused"]["message"].as_str().unwrap();
    assert!(
        msg.contains("1500 ms") && msg.contains("still running"),
        "{msg}"
    );
    let id = v["invocation_id"].as_str().unwrap().to_owned();
    // the gate keeps serving meanwhile (the timeout is generous: a ledger
    // fsync on a loaded machine can take a while)
    let r = c.invoke("test.slow", json!({"ms": 0}), None).await;
    assert_eq!(r.status, 200);
    // shutdown waits for the abandoned call, so its record is in the ledger
    let stopped = gate.stop().await;
    assert_eq!(stopped.report.calls_timed_out, 1);
    assert_eq!(stopped.report.calls_unfinished, 0);
    assert!(
        stopped
            .records
            .iter()
            .any(|rec| rec.entry.invocation_id == id),
        "the timed-out call is recorded under the id the 504 named"
    );
}
