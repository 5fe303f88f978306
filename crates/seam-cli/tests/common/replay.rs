//! An OpenAI-compatible model server on loopback that replays scripted
//! replies: the stand-in for a 9B model, speaking the real protocol
//! (`POST /v1/chat/completions`, streamed as server-sent events or whole;
//! `GET /v1/models`). It keeps every request so a test can read what the
//! model was shown.
#![allow(dead_code)]

use std::collections::VecDeque;
use std::sync::{Arc, Mutex};

use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::State;
use axum::http::StatusCode;
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use serde_json::{Value, json};

/// One scripted answer.
#[derive(Debug, Clone)]
pub enum Reply {
    /// The model says this.
    Text(&'static str),
    /// The server streams this much of a reply, then drops the connection.
    DieAfter(&'static str),
    /// The server answers with this status and error message.
    Status(u16, &'static str),
    /// The server streams the first text, then the second over and over, one
    /// event each, as a model stuck in a loop does, for this many events
    /// (then it ends the reply as `length`) unless the client hangs up first.
    Loop(&'static str, &'static str, usize),
}

#[derive(Default)]
struct Shared {
    script: VecDeque<Reply>,
    requests: Vec<Value>,
    /// The same requests as the bytes that came (a parsed map loses the
    /// order of its keys, which a grammar follows).
    bodies: Vec<String>,
    /// What `/v1/models` says owns the model (llama.cpp's server writes
    /// `llamacpp`); `None` leaves the field out.
    owned_by: Option<&'static str>,
    /// Events of a `Loop` reply sent before the reply ended or the client hung up.
    loop_sent: usize,
}

/// The running server; stops with the test process.
pub struct ReplayServer {
    pub url: String,
    shared: Arc<Mutex<Shared>>,
}

impl ReplayServer {
    pub fn start(script: Vec<Reply>) -> ReplayServer {
        ReplayServer::start_owned_by(script, None)
    }

    /// A server whose `/v1/models` names its owner as llama.cpp's does.
    pub fn start_as_llama_cpp(script: Vec<Reply>) -> ReplayServer {
        ReplayServer::start_owned_by(script, Some("llamacpp"))
    }

    fn start_owned_by(script: Vec<Reply>, owned_by: Option<&'static str>) -> ReplayServer {
        let shared = Arc::new(Mutex::new(Shared {
            script: script.into(),
            requests: Vec::new(),
            bodies: Vec::new(),
            owned_by,
            loop_sent: 0,
        }));
        let app = Router::new()
            .route("/v1/chat/completions", post(chat))
            .route("/v1/models", get(models))
            .with_state(shared.clone());
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .unwrap();
            rt.block_on(async move {
                let listener = tokio::net::TcpListener::bind("127.0.0.1:0").await.unwrap();
                tx.send(listener.local_addr().unwrap()).unwrap();
                axum::serve(listener, app).await.unwrap();
            });
        });
        let addr = rx.recv().unwrap();
        ReplayServer {
            url: format!("http://{addr}"),
            shared,
        }
    }

    /// Every chat request received, in order.
    pub fn requests(&self) -> Vec<Value> {
        self.shared.lock().unwrap().requests.clone()
    }

    /// Every chat request's body as it came, in order.
    pub fn bodies(&self) -> Vec<String> {
        self.shared.lock().unwrap().bodies.clone()
    }

    /// Events of a `Loop` reply the server got out before it ended or the
    /// client hung up.
    pub fn loop_events_sent(&self) -> usize {
        self.shared.lock().unwrap().loop_sent
    }

    /// Scripted replies not yet asked for.
    pub fn left(&self) -> usize {
        self.shared.lock().unwrap().script.len()
    }
}

async fn models(State(shared): State<Arc<Mutex<Shared>>>) -> impl IntoResponse {
    let mut model = json!({"id":"replay-9b","object":"model"});
    if let Some(owner) = shared.lock().unwrap().owned_by {
        model["owned_by"] = json!(owner);
    }
    axum::Json(json!({"object":"list","data":[model]}))
}

async fn chat(State(shared): State<Arc<Mutex<Shared>>>, body: Bytes) -> Response {
    let request: Value = serde_json::from_slice(&body).unwrap_or(Value::Null);
    let stream = request["stream"].as_bool().unwrap_or(false);
    let next = {
        let mut s = shared.lock().unwrap();
        s.requests.push(request);
        s.bodies.push(String::from_utf8_lossy(&body).into_owned());
        s.script.pop_front()
    };
    let Some(reply) = next else {
        return error(400, "the replay script has no more replies");
    };
    match reply {
        Reply::Status(code, message) => error(code, message),
        Reply::Text(text) if !stream => axum::Json(json!({
            "id": "replay", "object": "chat.completion", "model": "replay-9b",
            "choices": [{"index": 0, "message": {"role": "assistant", "content": text}, "finish_reason": "stop"}],
            "usage": {"prompt_tokens": 100, "completion_tokens": text.len() / 4 + 1},
        }))
        .into_response(),
        Reply::Text(text) => sse(text, true),
        Reply::DieAfter(text) => sse(text, false),
        Reply::Loop(start, again, times) => looping(shared.clone(), start, again, times),
    }
}

/// `start`, then `again` `times` over, one event each; each event counts in
/// `loop_sent` once it is handed to the connection. A client that hangs up
/// drops the stream, and the count stops there.
fn looping(shared: Arc<Mutex<Shared>>, start: &str, again: &str, times: usize) -> Response {
    let chunk = |piece: &str| {
        let c = json!({"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":piece},"finish_reason":null}]});
        Bytes::from(format!("data: {c}\n\n"))
    };
    let last = json!({"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"length"}]});
    let events: Vec<Bytes> = std::iter::once(chunk(start))
        .chain(std::iter::repeat_n(chunk(again), times))
        .chain(std::iter::once(Bytes::from(format!(
            "data: {last}\n\ndata: [DONE]\n\n"
        ))))
        .collect();
    let stream = futures_util::StreamExt::then(futures_util::stream::iter(events), move |e| {
        let shared = shared.clone();
        async move {
            tokio::time::sleep(std::time::Duration::from_millis(1)).await;
            shared.lock().unwrap().loop_sent += 1;
            Ok::<_, std::io::Error>(e)
        }
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .unwrap()
}

fn error(code: u16, message: &str) -> Response {
    (
        StatusCode::from_u16(code).unwrap(),
        axum::Json(json!({"error": {"message": message, "type": "replay"}})),
    )
        .into_response()
}

/// The reply as server-sent events in small pieces; when `whole` is false
/// the body fails after the pieces, which drops the connection mid-reply.
fn sse(text: &str, whole: bool) -> Response {
    let mut events: Vec<Result<Bytes, std::io::Error>> = Vec::new();
    let chars: Vec<char> = text.chars().collect();
    for piece in chars.chunks(5) {
        let piece: String = piece.iter().collect();
        let chunk = json!({"object":"chat.completion.chunk","choices":[{"index":0,"delta":{"content":piece},"finish_reason":null}]});
        events.push(Ok(Bytes::from(format!("data: {chunk}\n\n"))));
    }
    if whole {
        let last = json!({"object":"chat.completion.chunk","choices":[{"index":0,"delta":{},"finish_reason":"stop"}]});
        let usage = json!({"object":"chat.completion.chunk","choices":[],"usage":{"prompt_tokens":100,"completion_tokens":text.len() / 4 + 1}});
        events.push(Ok(Bytes::from(format!(
            "data: {last}\n\ndata: {usage}\n\ndata: [DONE]\n\n"
        ))));
    } else {
        events.push(Err(std::io::Error::other("the replay server dies here")));
    }
    // Each piece goes out on its own, a little apart, so a break comes after
    // the client has really received the start of the reply.
    let stream = futures_util::StreamExt::then(futures_util::stream::iter(events), |e| async {
        tokio::time::sleep(std::time::Duration::from_millis(2)).await;
        e
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .body(Body::from_stream(stream))
        .unwrap()
}
