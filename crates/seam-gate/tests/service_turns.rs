//! Turns and taint kept by the gate, through the service.

mod service_support;

use serde_json::json;
use service_support::{Conn, TestGate};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_taints_its_turn_which_then_refuses_egress_while_a_fresh_turn_serves_it() {
    let gate = TestGate::start(|_| {}).await;
    gate.write("private.txt", b"the owner's notes\n");
    let mut c = Conn::open(&gate.unix()).await.unwrap();

    let turn = c.open_turn().await;
    // egress first: served, and the turn is clean
    let r = c
        .invoke("test.egress", json!({"q": "weather"}), Some(&turn))
        .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.header("seam-turn"), Some(turn.as_str()));
    assert_eq!(r.header("seam-turn-tainted"), Some("false"));

    // a read of the owner's file taints the turn; the gate says so
    let r = c
        .invoke("files.read", json!({"path": "private.txt"}), Some(&turn))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["tainted"], true);
    assert_eq!(r.header("seam-turn-tainted"), Some("true"));
    let token = c.token(&turn);
    let s = c.on_turn("GET", &turn, &token).await;
    assert_eq!(s.status, 200);
    assert_eq!(s.json(), json!({"turn": turn, "tainted": true}));

    // egress in the tainted turn is refused, and says why
    let r = c
        .invoke(
            "test.egress",
            json!({"q": "the owner's notes"}),
            Some(&turn),
        )
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(r.json()["refused"]["code"], "tainted");
    let msg = r.json()["refused"]["message"].as_str().unwrap().to_owned();
    assert!(
        msg.contains("untrusted content") && msg.contains("new turn"),
        "{msg}"
    );
    // a later call that does not taint still reports the turn as tainted
    let r = c.invoke("test.slow", json!({"ms": 0}), Some(&turn)).await;
    assert_eq!(r.status, 200);
    assert_eq!(r.json()["tainted"], false, "this result carries nothing");
    assert_eq!(
        r.header("seam-turn-tainted"),
        Some("true"),
        "but the turn is"
    );

    // a fresh turn is served
    let fresh = c.open_turn().await;
    assert_ne!(fresh, turn);
    let r = c
        .invoke("test.egress", json!({"q": "weather"}), Some(&fresh))
        .await;
    assert_eq!(r.status, 200);
    // and so is a call without a turn (a one-call turn of its own)
    let r = c.invoke("test.egress", json!({"q": "weather"}), None).await;
    assert_eq!(r.status, 200);

    // the caller cannot un-taint: closing forgets the turn, and every later
    // call naming it is refused as not open
    let d = c.on_turn("DELETE", &turn, &token).await;
    assert_eq!(d.status, 204);
    let r = c
        .invoke("test.egress", json!({"q": "x"}), Some(&turn))
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["refused"]["code"], "unknown_turn");
    assert!(
        r.json()["refused"]["message"]
            .as_str()
            .unwrap()
            .contains("not open")
    );
    let d = c.on_turn("DELETE", &turn, &token).await;
    assert_eq!(d.status, 404);

    let stopped = gate.stop().await;
    let decisions: Vec<String> = stopped
        .records
        .iter()
        .map(|r| match &r.entry.decision {
            seam_ledger::Decision::Admitted => format!("{} ok", r.entry.tool),
            seam_ledger::Decision::Refused { code } => format!("{} {code}", r.entry.tool),
            other => format!("{} {}", r.entry.tool, other.label()),
        })
        .collect();
    assert_eq!(
        decisions,
        [
            "test.egress ok",
            "files.read ok",
            "test.egress tainted",
            "test.slow ok",
            "test.egress ok",
            "test.egress ok",
            "test.egress unknown_turn",
        ]
    );
    assert!(stopped.records[1].entry.tainted);
    assert_eq!(stopped.records[2].entry.turn_id.as_deref(), Some(&*turn));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_turn_the_gate_did_not_open_is_refused_with_a_clear_message() {
    let gate = TestGate::start(|_| {}).await;
    let mut c = Conn::open(&gate.unix()).await.unwrap();
    let r = c
        .invoke("test.egress", json!({"q": "x"}), Some("my-own-turn"))
        .await;
    assert_eq!(r.status, 400);
    let v = r.json();
    assert_eq!(v["refused"]["code"], "unknown_turn");
    let msg = v["refused"]["message"].as_str().unwrap();
    assert!(
        msg.contains("\"my-own-turn\"") && msg.contains("POST /v1/turns") && msg.contains("token"),
        "{msg}"
    );
    let s = c
        .send("GET", "/v1/turns/my-own-turn", &[], "")
        .await
        .unwrap();
    assert_eq!(s.status, 404);
    let stopped = gate.stop().await;
    assert_eq!(stopped.records.len(), 1, "the refusal is recorded");
    assert_eq!(
        stopped.records[0].entry.turn_id.as_deref(),
        Some("my-own-turn")
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn taint_egress_allow_in_the_policy_keeps_the_way_out() {
    let gate = TestGate::start_with_policy(|_| {}, Some("[taint]\negress = \"allow\"\n")).await;
    gate.write("private.txt", b"x\n");
    let mut c = Conn::open(&gate.unix()).await.unwrap();
    let turn = c.open_turn().await;
    let r = c
        .invoke("files.read", json!({"path": "private.txt"}), Some(&turn))
        .await;
    assert_eq!(r.status, 200);
    assert_eq!(r.header("seam-turn-tainted"), Some("true"));
    let r = c
        .invoke("test.egress", json!({"q": "x"}), Some(&turn))
        .await;
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    gate.stop().await;
}

/// Finding 3 of the security review: anyone on the gate's socket could open an untainted
/// turn, call without one, or close another session's turn (its id is on the ledger
/// stream). A client that holds neither the turn opener nor the turn's token (the agent)
/// can do none of it, and the tainted turn stays tainted.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_client_without_the_opener_cannot_open_call_outside_or_close_a_turn() {
    let gate = TestGate::start(|_| {}).await;
    gate.write("private.txt", b"the owner's notes\n");
    let mut launcher = Conn::open(&gate.unix()).await.unwrap();
    let turn = launcher.open_turn().await;
    let token = launcher.token(&turn);
    // the agent holds the turn's id and token (its launcher handed them over)
    let mut agent = Conn::open_as_agent(&gate.unix()).await.unwrap();
    let read = json!({"tool": "files.read", "params": {"path": "private.txt"}, "turn": turn, "token": token});
    let r = agent
        .send("POST", "/v1/invoke", &[], read.to_string())
        .await
        .unwrap();
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.header("seam-turn-tainted"), Some("true"));

    // a fresh turn: refused without the opener
    let o = agent.send("POST", "/v1/turns", &[], "").await.unwrap();
    assert_eq!(o.status, 403, "{}", String::from_utf8_lossy(&o.body));
    assert!(String::from_utf8_lossy(&o.body).contains("keys/turn-opener"));
    let o = agent
        .send("POST", "/v1/turns", &[("seam-turn-opener", &token)], "")
        .await
        .unwrap();
    assert_eq!(o.status, 403, "a turn's token is not the opener");
    // no turn at all: refused, not a one-call turn
    let r = agent
        .invoke("test.egress", json!({"q": "notes"}), None)
        .await;
    assert_eq!(r.status, 400, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["refused"]["code"], "unknown_turn");
    // the turn's id without its token (as read off the ledger stream)
    let r = agent
        .invoke("test.egress", json!({"q": "notes"}), Some(&turn))
        .await;
    assert_eq!(r.status, 400);
    assert_eq!(r.json()["refused"]["code"], "unknown_turn");
    for method in ["DELETE", "GET"] {
        let d = agent
            .send(method, &format!("/v1/turns/{turn}"), &[], "")
            .await
            .unwrap();
        assert_eq!(d.status, 404, "{method} without the token");
        let d = agent.on_turn(method, &turn, "0000").await;
        assert_eq!(d.status, 404, "{method} with a wrong token");
    }
    // the turn is still open and still tainted: egress in it is refused
    let egress =
        json!({"tool": "test.egress", "params": {"q": "notes"}, "turn": turn, "token": token});
    let r = agent
        .send("POST", "/v1/invoke", &[], egress.to_string())
        .await
        .unwrap();
    assert_eq!(r.status, 403);
    assert_eq!(r.json()["refused"]["code"], "tainted");
    gate.stop().await;
}

/// Finding 2's gate side: a local tool that hands the model the owner's data taints the
/// turn through the turn's own token; taint never leaves.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_holder_of_a_turn_can_taint_it_and_nobody_else_can() {
    let gate = TestGate::start(|_| {}).await;
    let mut launcher = Conn::open(&gate.unix()).await.unwrap();
    let turn = launcher.open_turn().await;
    let token = launcher.token(&turn);
    let mut other = Conn::open_as_agent(&gate.unix()).await.unwrap();
    let path = format!("/v1/turns/{turn}/taint");
    let t = other.send("POST", &path, &[], "").await.unwrap();
    assert_eq!(t.status, 404);
    let r = launcher
        .invoke("test.egress", json!({"q": "x"}), Some(&turn))
        .await;
    assert_eq!(r.status, 200, "an untainted turn still reaches out");
    let t = other
        .send("POST", &path, &[("seam-turn-token", &token)], "")
        .await
        .unwrap();
    assert_eq!(t.status, 204, "{}", String::from_utf8_lossy(&t.body));
    let r = launcher
        .invoke("test.egress", json!({"q": "x"}), Some(&turn))
        .await;
    assert_eq!(r.status, 403);
    assert_eq!(r.json()["refused"]["code"], "tainted");
    gate.stop().await;
}
