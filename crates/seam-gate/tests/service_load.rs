//! Many concurrent calls, graceful shutdown with calls in flight, and the
//! ledger stream, through a real gate on a real socket.

mod service_support;

use std::collections::HashSet;
use std::time::Duration;

use serde_json::json;
use service_support::{Conn, TestGate, Via};

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_invocations_are_all_answered_and_all_recorded() {
    let gate = TestGate::start(|_| {}).await;
    gate.write("small.txt", b"one\ntwo\n");
    const CLIENTS: usize = 16;
    const CALLS: usize = 40;
    let mut tasks = Vec::new();
    for i in 0..CLIENTS {
        let via = gate.unix();
        tasks.push(tokio::spawn(async move {
            let mut c = Conn::open(&via).await.unwrap();
            let mut ids = Vec::new();
            for j in 0..CALLS {
                // a mix: admitted reads and refusals
                let path = if (i + j) % 5 == 0 {
                    "/etc/hostname"
                } else {
                    "small.txt"
                };
                let r = c.invoke("files.read", json!({"path": path}), None).await;
                assert!(r.status == 200 || r.status == 403, "{}", r.status);
                ids.push(r.json()["invocation_id"].as_str().unwrap().to_owned());
            }
            ids
        }));
    }
    let mut answered = HashSet::new();
    for t in tasks {
        answered.extend(t.await.unwrap());
    }
    assert_eq!(answered.len(), CLIENTS * CALLS, "ids are unique");
    let stopped = gate.stop().await;
    assert_eq!(stopped.report.calls_answered, (CLIENTS * CALLS) as u64);
    assert_eq!(stopped.records.len(), CLIENTS * CALLS);
    let recorded: HashSet<String> = stopped
        .records
        .iter()
        .map(|r| r.entry.invocation_id.clone())
        .collect();
    assert_eq!(recorded, answered);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn shutdown_finishes_calls_in_flight_and_leaves_a_final_head() {
    let mut gate = TestGate::start(|_| {}).await;
    let mut tasks = Vec::new();
    for _ in 0..8 {
        let via = gate.unix();
        tasks.push(tokio::spawn(async move {
            let mut c = Conn::open(&via).await.unwrap();
            c.invoke("test.slow", json!({"ms": 400}), None).await
        }));
    }
    // let all eight reach the tool, then ask the gate to stop
    let health = loop {
        let r = service_support::send(&gate.unix(), "GET", "/v1/health", &[], "").await;
        if r.json()["in_flight"] == 8 {
            break r;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    };
    assert_eq!(health.status, 200);
    gate.signal_stop();
    // new connections are refused soon after the signal
    let socket = gate.socket.clone();
    let mut refused = false;
    for _ in 0..100 {
        if Conn::open(&Via::Unix(socket.clone())).await.is_err() {
            refused = true;
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert!(refused, "the gate stopped accepting");
    let mut ids = Vec::new();
    for t in tasks {
        let r = t.await.unwrap();
        assert_eq!(r.status, 200, "an in-flight call is finished, not dropped");
        ids.push(r.json()["invocation_id"].as_str().unwrap().to_owned());
    }
    let stopped = gate.stop().await;
    assert_eq!(stopped.report.calls_answered, 8);
    assert_eq!(stopped.report.calls_unfinished, 0);
    let recorded: HashSet<&str> = stopped
        .records
        .iter()
        .map(|r| r.entry.invocation_id.as_str())
        .collect();
    for id in &ids {
        assert!(
            recorded.contains(id.as_str()),
            "{id} answered but not recorded"
        );
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ledger_stream_sends_each_new_record_as_an_event() {
    use http_body_util::BodyExt;
    let gate = TestGate::start(|o| o.limits.stream_poll = Duration::from_millis(20)).await;
    gate.write("a.txt", b"a\n");
    let mut c = Conn::open(&gate.unix()).await.unwrap();
    // one record before the stream opens: not sent (only new ones)
    c.invoke("files.read", json!({"path": "a.txt"}), None).await;

    let stream = tokio::net::UnixStream::connect(&gate.socket).await.unwrap();
    let (mut send, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(conn);
    let req = hyper::Request::builder()
        .uri("/v1/ledger/stream")
        .header("host", "gate")
        .body(http_body_util::Empty::<axum::body::Bytes>::new())
        .unwrap();
    let resp = send.send_request(req).await.unwrap();
    assert_eq!(resp.status(), 200);
    assert_eq!(
        resp.headers()["content-type"].to_str().unwrap(),
        "text/event-stream"
    );
    let mut body = resp.into_body();

    let mut ids = Vec::new();
    for i in 0..3 {
        let r = c
            .invoke(
                "files.read",
                json!({"path": format!("missing{i}.txt")}),
                None,
            )
            .await;
        ids.push(r.json()["invocation_id"].as_str().unwrap().to_owned());
    }
    let mut text = String::new();
    let mut events: Vec<serde_json::Value> = Vec::new();
    while events.len() < 3 {
        let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
            .await
            .expect("an event within 10 s")
            .unwrap()
            .unwrap();
        if let Ok(data) = frame.into_data() {
            text.push_str(std::str::from_utf8(&data).unwrap());
        }
        events = text
            .split("\n\n")
            .filter(|e| e.contains("event: record"))
            .map(|e| {
                let data = e.lines().find_map(|l| l.strip_prefix("data: ")).unwrap();
                serde_json::from_str(data).unwrap()
            })
            .collect();
    }
    let streamed: Vec<&str> = events
        .iter()
        .map(|e| e["invocation_id"].as_str().unwrap())
        .collect();
    assert_eq!(streamed, ids.iter().map(String::as_str).collect::<Vec<_>>());
    assert_eq!(events[0]["seq"], 2);
    assert!(text.contains("id: 2\n"), "{text}");
    assert_eq!(events[0]["decision"]["code"], "not_found");

    // the stream ends when the gate shuts down, and shutdown does not wait on it
    let stopped = tokio::time::timeout(Duration::from_secs(10), gate.stop())
        .await
        .expect("shutdown is not held up by an open stream");
    assert_eq!(stopped.records.len(), 4);
    let rest = tokio::time::timeout(Duration::from_secs(5), body.collect()).await;
    assert!(rest.is_ok(), "the stream ended");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_ledger_stream_resumes_after_a_given_seq() {
    use http_body_util::BodyExt;
    let gate = TestGate::start(|o| o.limits.stream_poll = Duration::from_millis(20)).await;
    let mut c = Conn::open(&gate.unix()).await.unwrap();
    for _ in 0..3 {
        c.invoke("test.slow", json!({"ms": 0}), None).await;
    }
    let stream = tokio::net::UnixStream::connect(&gate.socket).await.unwrap();
    let (mut send, conn) =
        hyper::client::conn::http1::handshake(hyper_util::rt::TokioIo::new(stream))
            .await
            .unwrap();
    tokio::spawn(conn);
    let req = hyper::Request::builder()
        .uri("/v1/ledger/stream")
        .header("host", "gate")
        .header("last-event-id", "1")
        .body(http_body_util::Empty::<axum::body::Bytes>::new())
        .unwrap();
    let mut body = send.send_request(req).await.unwrap().into_body();
    let mut text = String::new();
    while text.matches("event: record").count() < 2 {
        let frame = tokio::time::timeout(Duration::from_secs(10), body.frame())
            .await
            .unwrap()
            .unwrap()
            .unwrap();
        if let Ok(d) = frame.into_data() {
            text.push_str(std::str::from_utf8(&d).unwrap());
        }
    }
    assert!(
        text.contains("id: 2\n") && text.contains("id: 3\n"),
        "{text}"
    );
    assert!(!text.contains("id: 1\n"));
    let bad =
        service_support::send(&gate.unix(), "GET", "/v1/ledger/stream?after=x", &[], "").await;
    assert_eq!(bad.status, 400);
    gate.stop().await;
}
