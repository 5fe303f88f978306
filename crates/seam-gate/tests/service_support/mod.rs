//! A real gate service on a real socket in a temp seam home, a client that
//! speaks HTTP/1.1 to it, and two test-only tools (one with egress, one slow).
#![allow(dead_code)]

use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::time::{Duration, Instant};

use axum::body::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use seam_gate::service::{BoundGate, GateService, ServeReport, ServiceOptions};
use seam_gate::{GovernedTool, LedgerHook, ToolCall, ToolDecl, ToolFailure, Toolbox};
use seam_ledger::{Ledger, Record};
use seam_policy::{Capability, Policy, PolicyEnv};
use serde_json::{Value, json};

/// A test tool's declaration: version 1, a read under `facts.get`'s capability, with no
/// paths, no taint and no egress. Each tool below sets what it does otherwise.
fn test_decl(name: &'static str, description: &'static str, schema: Value) -> ToolDecl {
    ToolDecl {
        name,
        version: "1",
        description,
        schema,
        capability: Capability::Facts,
        reads: true,
        paths: vec![],
        taints: false,
        egress: false,
        destinations: Vec::new(),
        none_named: seam_gate::NoneNamed::Unknown,
    }
}

/// A destination a test tool's call names in its param `field`.
fn destination(
    field: &'static str,
    form: seam_gate::DestinationForm,
) -> seam_gate::DestinationParam {
    seam_gate::DestinationParam { field, form }
}

/// `GovernedTool` for a test tool that holds its declaration and answers a call with the
/// value of `$answer`.
macro_rules! test_tool {
    ($tool:ident, |$call:ident| $answer:expr) => {
        impl GovernedTool for $tool {
            fn decl(&self) -> &ToolDecl {
                &self.0
            }
            fn run(&self, $call: ToolCall) -> Result<Value, ToolFailure> {
                Ok($answer)
            }
        }
    };
}

/// A tool that "reaches the network" (it only echoes): refused in a tainted turn.
#[derive(Debug)]
pub struct TestEgress(ToolDecl);

impl TestEgress {
    pub fn new() -> Self {
        TestEgress(ToolDecl {
            egress: true,
            ..test_decl(
                "test.egress",
                "test-only: pretends to send q out",
                json!({"type":"object","additionalProperties":false,"required":["q"],
                       "properties":{"q":{"type":"string"}}}),
            )
        })
    }
}

test_tool!(TestEgress, |call| json!({"sent": call.params()["q"]}));

/// A tool that "sends" `body` to `to` (and `cc`): egress, with its destinations declared.
#[derive(Debug)]
pub struct TestSend(ToolDecl);

impl TestSend {
    pub fn new() -> Self {
        TestSend(ToolDecl {
            egress: true,
            destinations: vec![
                destination("to", seam_gate::DestinationForm::Value),
                destination("cc", seam_gate::DestinationForm::Value),
            ],
            ..test_decl(
                "test.send",
                "test-only: pretends to send body to to and cc",
                json!({"type":"object","additionalProperties":false,"required":["to","body"],
                       "properties":{"to":{"type":"string"},"body":{"type":"string"},
                                     "cc":{"type":"array","items":{"type":"string"}}}}),
            )
        })
    }
}

test_tool!(TestSend, |call| {
    json!({"sent_to": call.params()["to"], "body": call.params()["body"]})
});

/// A tool that "creates an event" `title` and invites `participants` (optional): egress, the
/// participants its destinations, and what a call with none reaches as `none_named` says
/// (`test.invite`: no one new; `test.invite_unknown`: unknown).
#[derive(Debug)]
pub struct TestInvite(ToolDecl);

impl TestInvite {
    pub fn new(none_named: seam_gate::NoneNamed) -> Self {
        let name = match none_named {
            seam_gate::NoneNamed::NoOneNew => "test.invite",
            seam_gate::NoneNamed::Unknown => "test.invite_unknown",
        };
        TestInvite(ToolDecl {
            egress: true,
            destinations: vec![destination(
                "participants",
                seam_gate::DestinationForm::Value,
            )],
            none_named,
            ..test_decl(
                name,
                "test-only: pretends to create an event and invite participants",
                json!({"type":"object","additionalProperties":false,"required":["title"],
                       "properties":{"title":{"type":"string"},
                                     "participants":{"type":"array",
                                                     "items":{"type":"string"}}}}),
            )
        })
    }
}

test_tool!(TestInvite, |call| {
    json!({"created": call.params()["title"], "invited": call.params()["participants"]})
});

/// A tool that "fetches" `url`: egress, the URL's host its destination.
#[derive(Debug)]
pub struct TestFetch(ToolDecl);

impl TestFetch {
    pub fn new() -> Self {
        TestFetch(ToolDecl {
            taints: true,
            egress: true,
            destinations: vec![destination("url", seam_gate::DestinationForm::UrlHost)],
            ..test_decl(
                "test.fetch",
                "test-only: pretends to fetch url",
                json!({"type":"object","additionalProperties":false,"required":["url"],
                       "properties":{"url":{"type":"string"}}}),
            )
        })
    }
}

impl GovernedTool for TestFetch {
    fn decl(&self) -> &ToolDecl {
        &self.0
    }
    fn not_paths(&self) -> &[String] {
        // a URL (the toolbox reads a `url` as a path-like place until told otherwise)
        static URL: std::sync::OnceLock<Vec<String>> = std::sync::OnceLock::new();
        URL.get_or_init(|| vec!["url".to_owned()])
    }
    fn run(&self, call: ToolCall) -> Result<Value, ToolFailure> {
        Ok(json!({"fetched": call.params()["url"]}))
    }
}

/// A tool that sleeps `ms` milliseconds.
#[derive(Debug)]
pub struct TestSlow(ToolDecl);

impl TestSlow {
    pub fn new() -> Self {
        TestSlow(test_decl(
            "test.slow",
            "test-only: sleeps",
            json!({"type":"object","additionalProperties":false,"required":["ms"],
                   "properties":{"ms":{"type":"integer","minimum":0}}}),
        ))
    }
}

test_tool!(TestSlow, |call| {
    let ms = call.params()["ms"].as_u64().unwrap_or(0);
    std::thread::sleep(Duration::from_millis(ms));
    json!({"slept": ms})
});

/// A tool that acts (not a read) under `python.run`'s capability, so the default policy asks.
#[derive(Debug)]
pub struct TestAct(ToolDecl);

impl TestAct {
    pub fn new() -> Self {
        TestAct(ToolDecl {
            capability: Capability::PythonRun,
            reads: false,
            ..test_decl(
                "test.act",
                "test-only: does x",
                json!({"type":"object","additionalProperties":false,"required":["x"],
                       "properties":{"x":{"type":"string"}}}),
            )
        })
    }
}

test_tool!(TestAct, |call| json!({"did": call.params()["x"]}));

pub struct TestGate {
    pub dir: tempfile::TempDir,
    pub seam_home: PathBuf,
    pub project: PathBuf,
    pub socket: PathBuf,
    pub tcp: Option<SocketAddr>,
    pub token_path: PathBuf,
    toolbox: Arc<Toolbox>,
    ledger: Arc<Ledger>,
    stop: Option<tokio::sync::oneshot::Sender<()>>,
    task: tokio::task::JoinHandle<Result<ServeReport, seam_gate::service::ServiceError>>,
}

pub struct Stopped {
    pub report: ServeReport,
    /// Every record, after the ledger was closed and verified.
    pub records: Vec<Record>,
    pub dir: tempfile::TempDir,
    pub socket: PathBuf,
}

pub fn layout() -> (tempfile::TempDir, PathBuf, PathBuf, PolicyEnv) {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap();
    let seam_home = root.join("seam");
    let project = root.join("home/project");
    std::fs::create_dir_all(&project).unwrap();
    std::fs::create_dir_all(&seam_home).unwrap();
    let env = PolicyEnv {
        owner_home: root.join("home"),
        seam_home: seam_home.clone(),
        workspace_root: project.clone(),
    };
    (dir, seam_home, project, env)
}

pub fn tools() -> Vec<Box<dyn GovernedTool>> {
    vec![
        Box::new(seam_gate::tools::FilesRead::new(1024 * 1024)),
        Box::new(TestEgress::new()),
        Box::new(TestSlow::new()),
        Box::new(TestAct::new()),
    ]
}

impl TestGate {
    pub async fn start(configure: impl FnOnce(&mut ServiceOptions)) -> TestGate {
        Self::start_with_policy(configure, None).await
    }

    pub async fn start_with_policy(
        configure: impl FnOnce(&mut ServiceOptions),
        policy_toml: Option<&str>,
    ) -> TestGate {
        Self::start_with_consent(configure, policy_toml, None).await
    }

    /// A gate whose toolbox has `desk` (calls on `ask` wait there).
    pub async fn start_with_consent(
        configure: impl FnOnce(&mut ServiceOptions),
        policy_toml: Option<&str>,
        desk: Option<Arc<seam_gate::ConsentDesk>>,
    ) -> TestGate {
        Self::start_with_tools(configure, policy_toml, desk, tools()).await
    }

    /// A gate with exactly these tools.
    pub async fn start_with_tools(
        configure: impl FnOnce(&mut ServiceOptions),
        policy_toml: Option<&str>,
        desk: Option<Arc<seam_gate::ConsentDesk>>,
        tools: Vec<Box<dyn GovernedTool>>,
    ) -> TestGate {
        let (dir, seam_home, project, env) = layout();
        let policy = match policy_toml {
            Some(src) => Policy::from_toml_str(src, &dir.path().join("policy.toml"), env).unwrap(),
            None => Policy::builtin(env),
        };
        let ledger = Arc::new(Ledger::open(&seam_home).unwrap());
        let hook: Arc<dyn LedgerHook> = ledger.clone();
        let toolbox = Arc::new(
            Toolbox::with_tools(
                Arc::new(policy),
                Arc::new(seam_scrub::Scrubber::new()),
                hook,
                tools,
            )
            .unwrap()
            .requiring_open_turns(),
        );
        let toolbox = match desk {
            Some(desk) => Arc::new(
                Arc::try_unwrap(toolbox)
                    .expect("the toolbox is not shared yet")
                    .with_consent(desk),
            ),
            None => toolbox,
        };
        let mut options = ServiceOptions::new(&seam_home);
        configure(&mut options);
        let bound: BoundGate = GateService::new(toolbox.clone(), options)
            .bind()
            .await
            .unwrap();
        let socket = bound.socket_path().to_path_buf();
        let tcp = bound.tcp_addr();
        let token_path = bound.token_path().to_path_buf();
        let (stop, stopped) = tokio::sync::oneshot::channel::<()>();
        let task = tokio::spawn(bound.serve(async move {
            let _ = stopped.await;
        }));
        TestGate {
            dir,
            seam_home,
            project,
            socket,
            tcp,
            token_path,
            toolbox,
            ledger,
            stop: Some(stop),
            task,
        }
    }

    pub fn write(&self, rel: &str, content: &[u8]) -> PathBuf {
        let p = self.project.join(rel);
        std::fs::write(&p, content).unwrap();
        p
    }

    pub fn unix(&self) -> Via {
        Via::Unix(self.socket.clone())
    }

    pub fn token(&self) -> String {
        std::fs::read_to_string(&self.token_path)
            .unwrap()
            .trim()
            .to_owned()
    }

    /// Signals shutdown without waiting for it.
    pub fn signal_stop(&mut self) {
        if let Some(s) = self.stop.take() {
            let _ = s.send(());
        }
    }

    /// Shuts the gate down, closes the ledger (final head), verifies it and
    /// returns every record.
    pub async fn stop(mut self) -> Stopped {
        self.signal_stop();
        let report = self.task.await.unwrap().unwrap();
        drop(self.toolbox);
        // axum's serve returns once every connection task has let go of its
        // shutdown receiver, and each task drops its connection (which holds
        // the router, hence the toolbox and the ledger) a moment after that.
        // The binary shuts its runtime down first; a test waits for those
        // drops, boundedly, instead of racing them.
        let ledger = self.ledger;
        for _ in 0..500 {
            if Arc::strong_count(&ledger) == 1 {
                break;
            }
            tokio::time::sleep(std::time::Duration::from_millis(10)).await;
        }
        let ledger = Arc::try_unwrap(ledger)
            .expect("nothing else holds the ledger 5 s after the gate has stopped");
        ledger.close().unwrap();
        let verified = seam_ledger::verify(&self.seam_home, None)
            .unwrap_or_else(|e| panic!("the ledger does not verify after shutdown: {e}"));
        let reader = seam_ledger::LedgerReader::open(&self.seam_home).unwrap();
        let records: Vec<Record> = reader.records().map(Result::unwrap).collect();
        assert_eq!(verified.records, records.len() as u64);
        assert_eq!(
            verified.head.seq,
            records.len() as u64,
            "the head names the last record: no lag"
        );
        Stopped {
            report,
            records,
            dir: self.dir,
            socket: self.socket,
        }
    }
}

#[derive(Debug, Clone)]
pub enum Via {
    Unix(PathBuf),
    Tcp(SocketAddr),
}

#[derive(Debug)]
pub struct Reply {
    pub status: u16,
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
}

impl Reply {
    pub fn json(&self) -> Value {
        serde_json::from_slice(&self.body).unwrap_or_else(|e| {
            panic!(
                "{} body is not JSON ({e}): {}",
                self.status,
                String::from_utf8_lossy(&self.body)
            )
        })
    }

    pub fn header(&self, name: &str) -> Option<&str> {
        self.headers.get(name).and_then(|v| v.to_str().ok())
    }
}

/// One HTTP/1.1 connection (kept alive across requests). Opened with [`Conn::open`], it is
/// the owner's client: on the unix socket it presents the turn opener it read from the
/// gate's home (`keys/turn-opener`, beside the socket), and it remembers the token of each
/// turn it opened. [`Conn::open_as_agent`] is a client that holds neither.
pub struct Conn {
    send: SendRequest<Full<Bytes>>,
    pub opener: Option<String>,
    tokens: std::collections::HashMap<String, String>,
}

impl Conn {
    pub async fn open(via: &Via) -> std::io::Result<Conn> {
        let mut c = Self::open_as_agent(via).await?;
        if let Via::Unix(socket) = via
            && let Some(home) = socket.parent()
        {
            c.opener = std::fs::read_to_string(seam_home::SeamHome::new(home).turn_opener())
                .ok()
                .map(|s| s.trim().to_owned());
        }
        Ok(c)
    }

    /// The token of a turn this connection opened.
    pub fn token(&self, turn: &str) -> String {
        self.tokens.get(turn).cloned().unwrap_or_default()
    }

    /// A client that holds no turn opener and no token (the agent, or anyone else on the
    /// socket).
    pub async fn open_as_agent(via: &Via) -> std::io::Result<Conn> {
        let send = match via {
            Via::Unix(p) => {
                let s = tokio::net::UnixStream::connect(p).await?;
                handshake(s).await
            }
            Via::Tcp(a) => {
                let s = tokio::net::TcpStream::connect(a).await?;
                handshake(s).await
            }
        };
        Ok(Conn {
            send,
            opener: None,
            tokens: std::collections::HashMap::new(),
        })
    }

    pub async fn send(
        &mut self,
        method: &str,
        path: &str,
        headers: &[(&str, &str)],
        body: impl Into<Bytes>,
    ) -> Result<Reply, hyper::Error> {
        let mut req = hyper::Request::builder().method(method).uri(path);
        if !headers.iter().any(|(k, _)| k.eq_ignore_ascii_case("host")) {
            req = req.header("host", "gate");
        }
        for (k, v) in headers {
            req = req.header(*k, *v);
        }
        let req = req.body(Full::new(body.into())).unwrap();
        self.send.ready().await?;
        let resp = self.send.send_request(req).await?;
        let (parts, body) = resp.into_parts();
        let body = body.collect().await?.to_bytes();
        Ok(Reply {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body,
        })
    }

    /// An invoke; a turn this connection opened goes with its token, and the opener goes
    /// with every call when this connection holds it.
    pub async fn invoke(&mut self, tool: &str, params: Value, turn: Option<&str>) -> Reply {
        let mut body = json!({"tool": tool, "params": params});
        if let Some(t) = turn {
            body["turn"] = json!(t);
            if let Some(token) = self.tokens.get(t) {
                body["token"] = json!(token);
            }
        }
        let opener = self.opener.clone();
        let headers: Vec<(&str, &str)> = opener
            .as_deref()
            .map(|o| ("seam-turn-opener", o))
            .into_iter()
            .collect();
        self.send("POST", "/v1/invoke", &headers, body.to_string())
            .await
            .unwrap()
    }

    /// Opens a turn with this connection's opener and `words` as the operator's words for
    /// it, and keeps its token.
    pub async fn open_turn_with(&mut self, words: &[&str]) -> String {
        self.open_turn_from(json!({"operator_words": words}).to_string())
            .await
    }

    /// Hands this connection a turn's token (the agent holds its own turn's token).
    pub fn hold_token(&mut self, turn: &str, token: &str) {
        self.tokens.insert(turn.to_owned(), token.to_owned());
    }

    /// Opens a turn with this connection's opener and keeps its token.
    pub async fn open_turn(&mut self) -> String {
        self.open_turn_from(String::new()).await
    }

    /// `POST /v1/turns` with this connection's opener and `body`; keeps the new turn's token.
    async fn open_turn_from(&mut self, body: String) -> String {
        let opener = self.opener.clone().unwrap_or_default();
        let r = self
            .send("POST", "/v1/turns", &[("seam-turn-opener", &opener)], body)
            .await
            .unwrap();
        assert_eq!(r.status, 201, "{}", String::from_utf8_lossy(&r.body));
        let v = r.json();
        let turn = v["turn"].as_str().unwrap().to_owned();
        self.tokens
            .insert(turn.clone(), v["token"].as_str().unwrap().to_owned());
        turn
    }

    /// `method` (`GET`, `DELETE`) on `/v1/turns/{turn}` with `token` as the turn's token.
    pub async fn on_turn(&mut self, method: &str, turn: &str, token: &str) -> Reply {
        self.send(
            method,
            &format!("/v1/turns/{turn}"),
            &[("seam-turn-token", token)],
            "",
        )
        .await
        .unwrap()
    }
}

async fn handshake<S>(stream: S) -> SendRequest<Full<Bytes>>
where
    S: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin + Send + 'static,
{
    let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
        .await
        .unwrap();
    tokio::spawn(async move {
        let _ = conn.await;
    });
    send
}

/// One request on a fresh connection.
pub async fn send(
    via: &Via,
    method: &str,
    path: &str,
    headers: &[(&str, &str)],
    body: impl Into<Bytes>,
) -> Reply {
    Conn::open(via)
        .await
        .unwrap()
        .send(method, path, headers, body)
        .await
        .unwrap()
}

pub fn path_str(p: &Path) -> &str {
    p.to_str().unwrap()
}

/// Waits until the gate lists a pending consent, and returns the list.
pub async fn pending(owner: &mut Conn) -> Vec<Value> {
    let opener = owner.opener.clone().unwrap();
    let started = Instant::now();
    loop {
        let r = owner
            .send("GET", "/v1/consents", &[("seam-turn-opener", &opener)], "")
            .await
            .unwrap();
        assert_eq!(r.status, 200, "{}", String::from_utf8_lossy(&r.body));
        let list = r.json().as_array().cloned().unwrap();
        if !list.is_empty() {
            return list;
        }
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "no call came to wait"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

/// Answers the pending consent `id` (`once`, `turn`, `always`, `deny`) with `opener`, if
/// any: the status and body of the reply.
pub async fn answer(c: &mut Conn, opener: Option<&str>, id: &str, answer: &str) -> (u16, String) {
    let headers: Vec<(&str, &str)> = opener
        .map(|o| ("seam-turn-opener", o))
        .into_iter()
        .collect();
    let r = c
        .send(
            "POST",
            &format!("/v1/consents/{id}"),
            &headers,
            json!({"answer": answer}).to_string(),
        )
        .await
        .unwrap();
    (r.status, String::from_utf8_lossy(&r.body).into_owned())
}
