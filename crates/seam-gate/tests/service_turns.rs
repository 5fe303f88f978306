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
    let s = c
        .send("GET", &format!("/v1/turns/{turn}"), &[], "")
        .await
        .unwrap();
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
    let d = c
        .send("DELETE", &format!("/v1/turns/{turn}"), &[], "")
        .await
        .unwrap();
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
    let d = c
        .send("DELETE", &format!("/v1/turns/{turn}"), &[], "")
        .await
        .unwrap();
    assert_eq!(d.status, 404);

    let stopped = gate.stop().await;
    let decisions: Vec<String> = stopped
        .records
        .iter()
        .map(|r| match &r.entry.decision {
            seam_ledger::Decision::Admitted => format!("{} ok", r.entry.tool),
            seam_ledger::Decision::Refused { code } => format!("{} {code}", r.entry.tool),
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
        msg.contains("\"my-own-turn\"") && msg.contains("POST /v1/turns"),
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
