//! A client of the gate's HTTP `/v1`, over its unix socket or a loopback TCP
//! address with the bearer token.
//!
//! Self-contained on purpose: it depends on `seam-protocol` (the wire types),
//! hyper, tokio and serde_json, never on `seam-gate`, so the agent process can
//! take it as it is (the agent must reach governed tools only over HTTP). One
//! [`GateClient`] holds one HTTP/1.1 connection and reuses it; it reconnects
//! when the gate closed it while idle. It does not print.

use std::path::{Path, PathBuf};

use http_body_util::{BodyExt, Full};
use hyper::body::Bytes;
use hyper::client::conn::http1::SendRequest;
use hyper_util::rt::TokioIo;
use seam_home::SeamHome;
use seam_protocol::wire::TurnOpened;
use seam_protocol::{Answer, ToolSpec};
use serde_json::{Value, json};

/// The gate's socket below seam's home (as the gate names it).
pub const SOCKET_FILE: &str = seam_home::layout::GATE_SOCKET;
/// The bearer token below seam's home (as the gate writes it).
pub const TOKEN_FILE: &str = seam_home::layout::GATE_TOKEN;

/// Where the gate listens.
#[derive(Clone)]
pub enum GateEndpoint {
    /// The unix socket (no token: the socket is owner-only).
    Unix(PathBuf),
    /// A TCP address `host:port`, with the bearer token.
    Tcp { authority: String, token: String },
}

impl std::fmt::Debug for GateEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{self}")
    }
}

impl std::fmt::Display for GateEndpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GateEndpoint::Unix(p) => write!(f, "{}", p.display()),
            GateEndpoint::Tcp { authority, .. } => write!(f, "http://{authority}"),
        }
    }
}

impl GateEndpoint {
    /// The gate's unix socket in `seam_home`.
    pub fn unix_in(seam_home: &Path) -> GateEndpoint {
        GateEndpoint::Unix(SeamHome::new(seam_home).gate_socket())
    }

    /// The gate's `host:port` when it is on TCP (its unix socket has none).
    pub fn tcp_authority(&self) -> Option<&str> {
        match self {
            GateEndpoint::Tcp { authority, .. } => Some(authority),
            GateEndpoint::Unix(_) => None,
        }
    }

    /// `http://HOST:PORT` (a trailing `/` is allowed, nothing else), with the
    /// token read from `seam_home`.
    pub fn from_url(url: &str, seam_home: &Path) -> Result<GateEndpoint, GateClientError> {
        let bad = |reason: &str| GateClientError::BadUrl {
            url: url.to_owned(),
            reason: reason.to_owned(),
        };
        let rest = url.strip_prefix("http://").ok_or_else(|| {
            bad("it must start with http:// (the gate speaks plain HTTP on loopback)")
        })?;
        let authority = rest.strip_suffix('/').unwrap_or(rest);
        if authority.is_empty() || authority.contains(['/', '?', '#', '@', ' ']) {
            return Err(bad("give only http://HOST:PORT"));
        }
        let has_port = authority
            .rsplit_once(':')
            .is_some_and(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
        if !has_port {
            return Err(bad("it needs a port: http://127.0.0.1:PORT"));
        }
        Ok(GateEndpoint::Tcp {
            authority: authority.to_owned(),
            token: read_token(seam_home)?,
        })
    }
}

/// Reads the gate's bearer token from `seam_home`.
pub fn read_token(seam_home: &Path) -> Result<String, GateClientError> {
    read_secret(&SeamHome::new(seam_home).gate_token())
}

/// Where the gate keeps the turn opener in seam's home (the gate makes it at start).
pub const OPENER_FILE: &str = seam_home::layout::TURN_OPENER;

/// Reads the turn opener from `seam_home`: only a process outside the agent's walls can
/// (they never grant `keys/`).
pub fn read_opener(seam_home: &Path) -> Result<String, GateClientError> {
    read_secret(&SeamHome::new(seam_home).turn_opener())
}

fn read_secret(path: &Path) -> Result<String, GateClientError> {
    let path = path.to_path_buf();
    let text = std::fs::read_to_string(&path).map_err(|e| GateClientError::Token {
        path: path.clone(),
        reason: e.to_string(),
    })?;
    let token = text.trim();
    if token.is_empty() || !token.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(GateClientError::Token {
            path,
            reason: "it does not hold a token (hex digits)".into(),
        });
    }
    Ok(token.to_owned())
}

/// Why the gate could not be reached or used. A cause (I/O, HTTP) is part of the message and
/// not a `source()`: the turn shows this error to the model by its message alone.
#[derive(Debug, thiserror::Error)]
pub enum GateClientError {
    #[error("no gate is listening on {endpoint} ({cause}); start one with `seam gate`")]
    NotRunning {
        endpoint: String,
        cause: std::io::Error,
    },
    #[error("the gate URL {url:?} is not usable: {reason}")]
    BadUrl { url: String, reason: String },
    #[error("cannot read the gate's token {path}: {reason}")]
    Token { path: PathBuf, reason: String },
    #[error("talking to the gate at {endpoint}: {cause}")]
    Http {
        endpoint: String,
        cause: hyper::Error,
    },
    #[error("the gate at {endpoint} answered {status}: {message}")]
    Status {
        endpoint: String,
        status: u16,
        message: String,
    },
}

/// The answer to one invoke, with what the gate said about its turn.
#[derive(Debug, Clone)]
pub struct Invoked {
    /// The HTTP status (200 envelope; 400/403/404/422/504 refusal).
    pub status: u16,
    pub answer: Answer,
    /// The turn the call ran in.
    pub turn: Option<String>,
    /// Whether the gate has recorded that turn as tainted.
    pub turn_tainted: bool,
}

struct Reply {
    status: u16,
    headers: hyper::HeaderMap,
    body: Bytes,
}

/// A client of one gate. Not `Sync`: one per task; open several for
/// concurrency (each has its own connection).
pub struct GateClient {
    endpoint: GateEndpoint,
    conn: Option<SendRequest<Full<Bytes>>>,
    /// The turn opener, for the one client that may open turns (the launcher's own
    /// process, never the agent's).
    opener: Option<String>,
}

impl std::fmt::Debug for GateClient {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("GateClient")
            .field("endpoint", &self.endpoint)
            .finish_non_exhaustive()
    }
}

impl GateClient {
    pub fn new(endpoint: GateEndpoint) -> GateClient {
        GateClient {
            endpoint,
            conn: None,
            opener: None,
        }
    }

    /// A client that presents the turn opener (read from seam's home at
    /// `keys/turn-opener` by a process outside the agent's walls): it may open turns and
    /// invoke without one.
    pub fn with_opener(mut self, opener: String) -> GateClient {
        self.opener = Some(opener);
        self
    }

    pub fn endpoint(&self) -> &GateEndpoint {
        &self.endpoint
    }

    /// `GET /v1/health`.
    pub async fn health(&mut self) -> Result<Value, GateClientError> {
        let r = self
            .request("GET", "/v1/health", Bytes::new(), None)
            .await?;
        self.expect_json(r, 200)
    }

    /// `GET /v1/tools`.
    pub async fn tools(&mut self) -> Result<Vec<ToolSpec>, GateClientError> {
        let r = self.request("GET", "/v1/tools", Bytes::new(), None).await?;
        let v = self.expect_json(r, 200)?;
        serde_json::from_value(v).map_err(|e| self.unexpected(200, e.to_string()))
    }

    /// `POST /v1/turns` (takes the opener, see [`GateClient::with_opener`]): a new turn's
    /// id and token.
    pub async fn open_turn(&mut self) -> Result<TurnOpened, GateClientError> {
        self.open_turn_with(&[]).await
    }

    /// `POST /v1/turns` with the operator's words for the turn (the task): the gate holds
    /// them, and in a tainted turn lets an egress call reach a destination they name. Needs
    /// the turn opener ([`GateClient::with_opener`]).
    pub async fn open_turn_with(
        &mut self,
        operator_words: &[String],
    ) -> Result<TurnOpened, GateClientError> {
        let body = if operator_words.is_empty() {
            Bytes::new()
        } else {
            Bytes::from(json!({"operator_words": operator_words}).to_string())
        };
        let r = self.request("POST", "/v1/turns", body, None).await?;
        let v = self.expect_json(r, 201)?;
        serde_json::from_value(v).map_err(|e| self.unexpected(201, e.to_string()))
    }

    /// `POST /v1/turns/{id}/operator-words`: more of the operator's words for an open turn
    /// (the text of a file the operator attached). Needs the turn opener and the turn's token.
    pub async fn add_operator_words(
        &mut self,
        turn: &TurnOpened,
        text: &[String],
    ) -> Result<(), GateClientError> {
        let path = format!("/v1/turns/{}/operator-words", turn.turn);
        let body = Bytes::from(json!({"text": text}).to_string());
        let r = self.request("POST", &path, body, Some(&turn.token)).await?;
        if r.status != 204 {
            return Err(self.unexpected(r.status, error_message(&r.body)));
        }
        Ok(())
    }

    /// `DELETE /v1/turns/{id}`: the gate forgets the turn (and its taint).
    pub async fn close_turn(&mut self, turn: &TurnOpened) -> Result<(), GateClientError> {
        let path = format!("/v1/turns/{}", turn.turn);
        let r = self
            .request("DELETE", &path, Bytes::new(), Some(&turn.token))
            .await?;
        if r.status != 204 {
            return Err(self.unexpected(r.status, error_message(&r.body)));
        }
        Ok(())
    }

    /// `POST /v1/turns/{id}/taint`: the turn is tainted from now on (a local tool handed
    /// the model the owner's data, or text a model wrote in an earlier turn).
    pub async fn taint_turn(&mut self, turn: &TurnOpened) -> Result<(), GateClientError> {
        let path = format!("/v1/turns/{}/taint", turn.turn);
        let r = self
            .request("POST", &path, Bytes::new(), Some(&turn.token))
            .await?;
        if r.status != 204 {
            return Err(self.unexpected(r.status, error_message(&r.body)));
        }
        Ok(())
    }

    /// `POST /v1/invoke`. An envelope or a refusal is `Ok` whatever its
    /// status; `Err` is an answer that is neither (401, 413, 500, …) or no
    /// answer at all.
    pub async fn invoke(
        &mut self,
        tool: &str,
        params: Value,
        turn: Option<&TurnOpened>,
    ) -> Result<Invoked, GateClientError> {
        let mut body = json!({"tool": tool, "params": params});
        if let Some(t) = turn {
            body["turn"] = json!(t.turn);
            body["token"] = json!(t.token);
        }
        let r = self
            .request("POST", "/v1/invoke", Bytes::from(body.to_string()), None)
            .await?;
        let answer: Answer = match serde_json::from_slice(&r.body) {
            Ok(a) => a,
            Err(_) => return Err(self.unexpected(r.status, error_message(&r.body))),
        };
        let header = |name: &str| {
            r.headers
                .get(name)
                .and_then(|v| v.to_str().ok())
                .map(str::to_owned)
        };
        Ok(Invoked {
            status: r.status,
            answer,
            turn: header("seam-turn"),
            turn_tainted: header("seam-turn-tainted").as_deref() == Some("true"),
        })
    }

    /// `GET /v1/consents` (the owner's: takes the opener, on the unix socket): the calls
    /// waiting for the operator.
    pub async fn consents(
        &mut self,
    ) -> Result<Vec<seam_protocol::wire::PendingConsent>, GateClientError> {
        let r = self
            .request("GET", "/v1/consents", Bytes::new(), None)
            .await?;
        let v = self.expect_json(r, 200)?;
        serde_json::from_value(v).map_err(|e| self.unexpected(200, e.to_string()))
    }

    /// `POST /v1/consents/{id}`: the operator's answer to one pending call.
    pub async fn answer_consent(
        &mut self,
        id: &str,
        answer: seam_protocol::wire::ConsentReply,
    ) -> Result<(), GateClientError> {
        let body = serde_json::to_vec(&seam_protocol::wire::ConsentAnswerRequest { answer })
            .map_err(|e| self.unexpected(0, e.to_string()))?;
        let path = format!("/v1/consents/{id}");
        let r = self.request("POST", &path, Bytes::from(body), None).await?;
        if r.status != 204 {
            return Err(self.unexpected(r.status, error_message(&r.body)));
        }
        Ok(())
    }

    fn expect_json(&self, r: Reply, status: u16) -> Result<Value, GateClientError> {
        if r.status != status {
            return Err(self.unexpected(r.status, error_message(&r.body)));
        }
        serde_json::from_slice(&r.body).map_err(|e| self.unexpected(r.status, e.to_string()))
    }

    fn unexpected(&self, status: u16, message: String) -> GateClientError {
        GateClientError::Status {
            endpoint: self.endpoint.to_string(),
            status,
            message,
        }
    }

    async fn connect(&self) -> Result<SendRequest<Full<Bytes>>, GateClientError> {
        let not_running = |cause| GateClientError::NotRunning {
            endpoint: self.endpoint.to_string(),
            cause,
        };
        let http = |cause| GateClientError::Http {
            endpoint: self.endpoint.to_string(),
            cause,
        };
        match &self.endpoint {
            GateEndpoint::Unix(path) => {
                let s = tokio::net::UnixStream::connect(path)
                    .await
                    .map_err(not_running)?;
                let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(s))
                    .await
                    .map_err(http)?;
                tokio::spawn(conn);
                Ok(send)
            }
            GateEndpoint::Tcp { authority, .. } => {
                let s = tokio::net::TcpStream::connect(authority.as_str())
                    .await
                    .map_err(not_running)?;
                let _ = s.set_nodelay(true);
                let (send, conn) = hyper::client::conn::http1::handshake(TokioIo::new(s))
                    .await
                    .map_err(http)?;
                tokio::spawn(conn);
                Ok(send)
            }
        }
    }

    async fn request(
        &mut self,
        method: &str,
        path: &str,
        body: Bytes,
        turn_token: Option<&str>,
    ) -> Result<Reply, GateClientError> {
        let http = |cause| GateClientError::Http {
            endpoint: self.endpoint.to_string(),
            cause,
        };
        // A connection the gate closed while idle is replaced before use;
        // a request is never sent twice.
        let reusable = match self.conn.take() {
            Some(mut s) if !s.is_closed() => s.ready().await.is_ok().then_some(s),
            _ => None,
        };
        let mut send = match reusable {
            Some(s) => s,
            None => {
                let mut s = self.connect().await?;
                s.ready().await.map_err(http)?;
                s
            }
        };
        let mut req = hyper::Request::builder()
            .method(method)
            .uri(path)
            .header("host", "seam-gate")
            .header("content-type", "application/json");
        if let GateEndpoint::Tcp { token, .. } = &self.endpoint {
            req = req.header("authorization", format!("Bearer {token}"));
        }
        if let Some(opener) = &self.opener {
            req = req.header(seam_protocol::wire::TURN_OPENER_HEADER, opener.as_str());
        }
        if let Some(t) = turn_token {
            req = req.header(seam_protocol::wire::TURN_TOKEN_HEADER, t);
        }
        let req = req
            .body(Full::new(body))
            .map_err(|e| self.unexpected(0, format!("cannot build the request: {e}")))?;
        let resp = send.send_request(req).await.map_err(http)?;
        let (parts, body) = resp.into_parts();
        let body = body.collect().await.map_err(http)?.to_bytes();
        self.conn = Some(send);
        Ok(Reply {
            status: parts.status.as_u16(),
            headers: parts.headers,
            body,
        })
    }
}

/// The `error` of an `{"error": …}` body, else the body as text (cut short).
fn error_message(body: &[u8]) -> String {
    if let Ok(v) = serde_json::from_slice::<Value>(body)
        && let Some(e) = v["error"].as_str()
    {
        return e.to_owned();
    }
    let text = String::from_utf8_lossy(body);
    seam_term::head(&text, 500).0.to_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gate_urls() {
        let dir = tempfile::tempdir().unwrap();
        let home = SeamHome::new(dir.path());
        std::fs::create_dir_all(home.keys()).unwrap();
        std::fs::write(home.gate_token(), "ab12\n").unwrap();
        match GateEndpoint::from_url("http://127.0.0.1:8080/", dir.path()).unwrap() {
            GateEndpoint::Tcp { authority, token } => {
                assert_eq!(authority, "127.0.0.1:8080");
                assert_eq!(token, "ab12");
            }
            other => panic!("{other}"),
        }
        assert!(GateEndpoint::from_url("http://[::1]:9/", dir.path()).is_ok());
        for bad in [
            "https://127.0.0.1:1",
            "127.0.0.1:1",
            "http://127.0.0.1",
            "http://127.0.0.1:1/v1",
            "http://u@127.0.0.1:1",
            "http://",
        ] {
            assert!(
                matches!(
                    GateEndpoint::from_url(bad, dir.path()),
                    Err(GateClientError::BadUrl { .. })
                ),
                "{bad}"
            );
        }
        let debug = format!(
            "{:?}",
            GateEndpoint::from_url("http://127.0.0.1:1", dir.path()).unwrap()
        );
        assert!(!debug.contains("ab12"), "the token is not shown: {debug}");
    }
}
