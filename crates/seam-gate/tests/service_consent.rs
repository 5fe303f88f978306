//! Consent through the service: a call on `ask` waits; the owner answers over the socket
//! (with the turn opener, the peer's uid recorded); the agent's side cannot; an answer covers
//! exactly the call it names; every answer and timeout is a signed ledger record.

mod service_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use seam_gate::ConsentDesk;
use seam_ledger::{ConsentAnswer, ConsentBy, ConsentScope, Decision};
use serde_json::json;
use service_support::{Conn, TestGate, Via, answer, pending};

fn sha256_hex(text: &str) -> String {
    use sha2::{Digest, Sha256};
    hex::encode(Sha256::digest(text.as_bytes()))
}

#[tokio::test(flavor = "multi_thread", worker_threads = 4)]
async fn the_owner_answers_over_the_socket_and_each_answer_covers_only_what_it_names() {
    let desk = Arc::new(ConsentDesk::new(Duration::from_secs(20)).with_socket());
    let gate = TestGate::start_with_consent(
        |o| {
            // shorter than the wait below: the wait for the operator must not count
            o.limits.call_timeout = Duration::from_millis(500);
            o.tcp = Some("127.0.0.1:0".parse().unwrap());
        },
        None,
        Some(desk),
    )
    .await;
    let mut agent_side = Conn::open(&gate.unix()).await.unwrap();
    let turn = agent_side.open_turn().await;
    let token = agent_side.token(&turn);
    let via = gate.unix();
    let call = |x: &str, turn: String, token: String| {
        let via = via.clone();
        let x = x.to_owned();
        tokio::spawn(async move {
            let mut c = Conn::open_as_agent(&via).await.unwrap();
            let body =
                json!({"tool": "test.act", "params": {"x": x}, "turn": turn, "token": token});
            c.send("POST", "/v1/invoke", &[], body.to_string())
                .await
                .unwrap()
        })
    };
    let mut owner = Conn::open(&gate.unix()).await.unwrap();
    let opener = owner.opener.clone().unwrap();

    // 1. a call waits; the listing shows it in full, with the digest of its params
    let first = call("one", turn.clone(), token.clone());
    let list = pending(&mut owner).await;
    assert_eq!(list.len(), 1);
    let p = &list[0];
    assert_eq!(p["tool"], "test.act");
    assert_eq!(p["turn"], json!(turn));
    assert_eq!(p["capability"], "python.run");
    assert_eq!(p["params"], json!({"x": "one"}));
    assert_eq!(p["params_sha256"], json!(sha256_hex(r#"{"x":"one"}"#)));
    let id = p["id"].as_str().unwrap().to_owned();

    // the agent's side cannot answer: no opener on the socket, and never over TCP
    let mut agent = Conn::open_as_agent(&gate.unix()).await.unwrap();
    let (status, body) = answer(&mut agent, None, &id, "once").await;
    assert_eq!(status, 403, "{body}");
    assert!(body.contains("turn opener"), "{body}");
    let r = agent.send("GET", "/v1/consents", &[], "").await.unwrap();
    assert_eq!(r.status, 403);
    let mut tcp = Conn::open_as_agent(&Via::Tcp(gate.tcp.unwrap()))
        .await
        .unwrap();
    let bearer = format!("Bearer {}", gate.token());
    let r = tcp
        .send(
            "POST",
            &format!("/v1/consents/{id}"),
            &[("authorization", &bearer), ("seam-turn-opener", &opener)],
            json!({"answer": "once"}).to_string(),
        )
        .await
        .unwrap();
    assert_eq!(r.status, 403, "{}", String::from_utf8_lossy(&r.body));
    assert!(!first.is_finished(), "the call still waits");

    // past the call timeout, the owner says yes once: the call runs, not a 504
    tokio::time::sleep(Duration::from_millis(800)).await;
    assert_eq!(answer(&mut owner, Some(&opener), &id, "once").await.0, 204);
    let r = first.await.unwrap();
    assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
    assert_eq!(r.json()["output"], json!({"did": "one"}));
    // answered already: a second answer names nothing
    assert_eq!(answer(&mut owner, Some(&opener), &id, "once").await.0, 404);

    // 2. "once" did not cover another call with other params: it waits; the owner says no
    let second = call("two", turn.clone(), token.clone());
    let list = pending(&mut owner).await;
    assert_eq!(list[0]["params"], json!({"x": "two"}));
    let id2 = list[0]["id"].as_str().unwrap().to_owned();
    assert_ne!(id2, id);
    assert_eq!(answer(&mut owner, Some(&opener), &id2, "deny").await.0, 204);
    let r = second.await.unwrap();
    assert_eq!(r.status, 403);
    assert_eq!(r.json()["refused"]["code"], "consent_denied");
    assert!(
        r.json()["refused"]["message"]
            .as_str()
            .unwrap()
            .contains("said no"),
        "{}",
        r.json()
    );

    // 3. "turn" covers the tool for the rest of this turn, any params, and no other turn
    let third = call("three", turn.clone(), token.clone());
    let id3 = pending(&mut owner).await[0]["id"]
        .as_str()
        .unwrap()
        .to_owned();
    assert_eq!(answer(&mut owner, Some(&opener), &id3, "turn").await.0, 204);
    assert_eq!(third.await.unwrap().status, 200);
    let r = call("four", turn.clone(), token.clone()).await.unwrap();
    assert_eq!(r.status, 200, "covered by the turn answer");
    let other = agent_side.open_turn().await;
    let other_token = agent_side.token(&other);
    let fifth = call("five", other.clone(), other_token);
    let list = pending(&mut owner).await;
    assert_eq!(list[0]["turn"], json!(other), "another turn is asked again");
    let id5 = list[0]["id"].as_str().unwrap().to_owned();
    assert_eq!(answer(&mut owner, Some(&opener), &id5, "once").await.0, 204);
    assert_eq!(fifth.await.unwrap().status, 200);

    // every answer is a signed record before the call's own, with the call's params digest
    // and the socket peer's uid
    let stopped = gate.stop().await;
    let uid = rustix::process::geteuid().as_raw();
    let consents: Vec<(String, ConsentAnswer, ConsentScope, ConsentBy)> = stopped
        .records
        .iter()
        .filter_map(|r| match &r.entry.decision {
            Decision::Consent(c) => {
                assert!(c.policy_digest.starts_with("sha256:"));
                let call = stopped
                    .records
                    .iter()
                    .find(|o| {
                        o.entry.invocation_id == r.entry.invocation_id
                            && !matches!(o.entry.decision, Decision::Consent(_))
                    })
                    .expect("the call's own record");
                assert!(call.seq > r.seq, "the consent comes first");
                assert_eq!(call.params_sha256, r.params_sha256);
                Some((
                    r.entry.params["x"].as_str().unwrap().to_owned(),
                    c.answer,
                    c.scope,
                    c.by,
                ))
            }
            _ => None,
        })
        .collect();
    let by = ConsentBy::Socket { uid };
    assert_eq!(
        consents,
        [
            ("one".into(), ConsentAnswer::Granted, ConsentScope::Once, by),
            ("two".into(), ConsentAnswer::Denied, ConsentScope::Once, by),
            (
                "three".into(),
                ConsentAnswer::Granted,
                ConsentScope::Turn,
                by
            ),
            (
                "five".into(),
                ConsentAnswer::Granted,
                ConsentScope::Once,
                by
            ),
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn nobody_answering_is_a_refusal_that_says_how_to_allow_and_a_record() {
    let desk = Arc::new(ConsentDesk::new(Duration::from_millis(300)).with_socket());
    let gate = TestGate::start_with_consent(|_| {}, None, Some(desk)).await;
    let mut c = Conn::open(&gate.unix()).await.unwrap();
    let turn = c.open_turn().await;
    let t = Instant::now();
    let r = c
        .invoke("test.act", json!({"x": "late"}), Some(&turn))
        .await;
    assert!(t.elapsed() >= Duration::from_millis(300));
    assert_eq!(r.status, 403);
    assert_eq!(r.json()["refused"]["code"], "consent_required");
    let msg = r.json()["refused"]["message"].as_str().unwrap().to_owned();
    assert!(
        msg.contains("nobody answered") && msg.contains("[consent] always"),
        "{msg}"
    );
    drop(c);
    let stopped = gate.stop().await;
    let kinds: Vec<String> = stopped
        .records
        .iter()
        .map(|r| r.entry.decision.label())
        .collect();
    assert_eq!(
        kinds,
        [
            "consent:timed_out/once by nobody",
            "refused:consent_required"
        ]
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_read_on_ask_never_waits_and_always_in_the_policy_never_asks() {
    let desk = Arc::new(ConsentDesk::new(Duration::from_secs(20)).with_socket());
    let gate = TestGate::start_with_consent(
        |_| {},
        Some("[capabilities]\n\"filesystem.read\" = \"ask\"\n[consent]\nalways = [\"test.act\"]\n"),
        Some(desk),
    )
    .await;
    gate.write("a.txt", b"x\n");
    let mut c = Conn::open(&gate.unix()).await.unwrap();
    let turn = c.open_turn().await;
    let t = Instant::now();
    let r = c.invoke("test.act", json!({"x": "y"}), Some(&turn)).await;
    assert_eq!(r.status, 200, "[consent] always answers for the owner");
    let r = c
        .invoke("files.read", json!({"path": "a.txt"}), Some(&turn))
        .await;
    assert!(t.elapsed() < Duration::from_secs(5), "nothing waited");
    assert_eq!(r.json()["refused"]["code"], "consent_required");
    assert!(
        r.json()["refused"]["message"]
            .as_str()
            .unwrap()
            .contains("a read cannot wait")
    );
    gate.stop().await;
}
