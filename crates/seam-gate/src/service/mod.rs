//! The gate as a service: HTTP `/v1` over a unix socket (and, if asked, a
//! loopback TCP address), in front of one shared [`Toolbox`].
//!
//! # Endpoints and statuses
//!
//! | request | answer |
//! |---|---|
//! | `GET /v1/health` | 200 [`Health`] |
//! | `GET /v1/tools` | 200 `[ToolSpec]` |
//! | `POST /v1/invoke` `{tool, params, turn?, token?}` | the envelope or the refusal of DESIGN.md, see below |
//! | `POST /v1/turns` + `seam-turn-opener`, body empty or [`OpenTurnRequest`] `{"operator_words": [...]}` | 201 [`TurnOpened`] `{"turn": id, "token": secret}`; 403 without the opener |
//! | `GET /v1/turns/{id}` + `seam-turn-token` | 200 [`TurnState`] `{"turn", "tainted"}`, 404 if not open or not its token |
//! | `DELETE /v1/turns/{id}` + `seam-turn-token` | 204, 404 if not open or not its token |
//! | `POST /v1/turns/{id}/taint` + `seam-turn-token` | 204: the turn is tainted from now on; 404 as above |
//! | `POST /v1/turns/{id}/operator-words` `{"text": [...]}` + `seam-turn-opener` + `seam-turn-token` | 204: more of the operator's words for the turn; 403 without the opener; 404 as above |
//! | `GET /v1/ledger/stream` | 200 `text/event-stream`: one event per new ledger record |
//! | `/mcp` + `seam-turn-opener` | MCP over streamable HTTP, a session a turn of its own; 403 without the opener |
//! | `GET /v1/consents` + `seam-turn-opener`, unix socket only | 200 `[PendingConsent]`: the calls waiting for the operator |
//! | `POST /v1/consents/{id}` `{"answer": "once"\|"turn"\|"always"\|"deny"}` + `seam-turn-opener`, unix socket only | 204; 404 not waiting; 403 without the opener or over TCP; 409 an "always" whose rule could not be written |
//!
//! `POST /v1/invoke` answers with the status of its answer, and the body is
//! always the envelope or the refusal JSON, exactly as `Toolbox::call` made
//! them: 200 envelope; 400 `invalid_params` (the schema errors are in the
//! message; also a turn that is not open); 404 `unknown_tool`; 403 for a policy
//! refusal (`capability_denied`, `consent_required`, `protected`,
//! `not_allowed`, `tainted`, the agent side's `core_path`, and any code added
//! later); 422 for a well-formed call the tool could not carry out
//! (`invalid_path`, `not_found`, `not_a_file`, `tool_failed`, and the agent
//! side's `failed` and `unavailable`, which no gate tool answers today); 504 when the call did not finish within the
//! per-call timeout (a refusal with code `tool_failed` that says so: the call
//! keeps running, and the ledger records its real outcome under the same
//! invocation id). Every invoke answer carries the headers `seam-turn` (the
//! turn it ran in) and `seam-turn-tainted` (`true` once the gate has recorded
//! that turn as tainted). Answers that are not about a governed call have the
//! body [`ErrorBody`] `{"error": …}`: 400 a body that is not an invoke request,
//! 401 no or a wrong bearer token on TCP, 404 no such endpoint, 413 a body
//! over the limit (1 MiB by default), 500 the gate could not govern the call
//! (e.g. the ledger failed: the call is not answered).
//!
//! # Turns
//!
//! The toolbox given to the service must be built with
//! [`Toolbox::requiring_open_turns`]. A turn is a capability the gate handed
//! out: an id (public: the ledger and its stream show it) and a token (secret).
//! Opening one takes the **turn opener**, a secret in `<seam_home>/keys/turn-opener`
//! (owner-only, made on first start): `seam ask`'s launcher reads it in a process
//! of its own before the agent's walls go up, and the walls never grant `keys/`,
//! so a confined (even a compromised) agent can neither open a fresh, untainted
//! turn nor call without one. A call names its turn's id and token, or it is
//! refused (`unknown_turn`, 400, recorded); asking after, tainting or closing a
//! turn takes its token too, so a client that read another session's turn id off
//! the ledger stream cannot close that turn (closing forgets its taint).
//!
//! The operator's words for a turn (the task, attached files' text) are given by its opener:
//! in the body of `POST /v1/turns`, or with the opener and the turn's token at
//! `POST /v1/turns/{id}/operator-words`. In a tainted turn an egress call may still reach a
//! destination they name (see [`Toolbox::call`](crate::Toolbox::call)); the agent, which
//! holds its turn's token and never the opener, cannot add to them. The gate,
//! not the caller, records taint, and no call can un-taint a turn. An invoke
//! without a turn, from a client presenting the opener (the owner's own CLI), gets
//! a turn of its own, opened for that one call and closed after it.
//!
//! # Consent
//!
//! A call on `ask` waits in the toolbox's [`ConsentDesk`](crate::ConsentDesk). Its wait is
//! not counted against the call timeout: the 504 comes `call_timeout` after the call stopped
//! waiting for the operator. The consent endpoints are the owner's: on the unix socket only
//! (whose peers are checked to be the gate's own user; the answer records that uid) and only
//! with the turn opener, which the agent, confined, never holds, so it cannot answer for the
//! operator however it reaches the socket.
//!
//! # Listening
//!
//! `<seam_home>/gate.sock`, mode 0600, bound in a private directory and moved
//! into place; connections from any other uid are dropped (peer credentials).
//! A socket another gate answers on is refused; a stale one is removed. TCP
//! only on a loopback address unless `allow_non_loopback`, and only with
//! `Authorization: Bearer <token>` (the token in `<seam_home>/keys/gate.token`,
//! made owner-only on first start; compared in constant time).
//!
//! # Calls and shutdown
//!
//! `Toolbox::call` is synchronous (it waits for the ledger's fsync), so each
//! call runs on tokio's blocking pool; the ledger's group commit lets
//! concurrent calls share an fsync. On the shutdown signal the gate stops
//! accepting, lets open connections finish the requests they have begun
//! (idle keep-alive connections are closed), ends ledger streams, and waits
//! for every call still running (including ones it stopped waiting for) up to
//! the grace period. Then [`BoundGate::serve`] returns, and the caller drops
//! the toolbox and closes the ledger, which writes its final head.
//!
//! What this module must never do: answer a call except with what
//! `Toolbox::call` returned (or the timeout refusal naming the same
//! invocation id), listen on a non-loopback address unasked, or serve TCP
//! without the token.

mod auth;
mod listen;
mod routes;
mod stream;
mod wire;

use std::future::Future;
use std::net::SocketAddr;
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use axum::http::StatusCode;
use axum::serve::ListenerExt;
use seam_ledger::LedgerPaths;
use seam_protocol::RefusalCode;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use seam_toolbox::Toolbox;

pub use auth::{BearerToken, OPENER_FILE, TOKEN_FILE, token_path};
pub use listen::{SOCKET_FILE, socket_path};
pub use wire::{
    ErrorBody, Health, InvokeRequest, OpenTurnRequest, OperatorWordsRequest, TURN_HEADER,
    TURN_OPENER_HEADER, TURN_TAINTED_HEADER, TURN_TOKEN_HEADER, TurnOpened, TurnState,
};

/// The service's limits.
#[derive(Debug, Clone)]
pub struct ServiceLimits {
    /// Largest request body; beyond it, 413. Default 1 MiB.
    pub max_body_bytes: usize,
    /// How long an invoke waits for its call; then 504. Default 30 s.
    pub call_timeout: Duration,
    /// How long shutdown waits for requests and calls still running. Default 30 s.
    pub shutdown_grace: Duration,
    /// How often a ledger stream polls for new records. Default 100 ms.
    pub stream_poll: Duration,
}

impl Default for ServiceLimits {
    fn default() -> Self {
        ServiceLimits {
            max_body_bytes: 1024 * 1024,
            call_timeout: Duration::from_secs(30),
            shutdown_grace: Duration::from_secs(30),
            stream_poll: Duration::from_millis(100),
        }
    }
}

/// Where and how the gate listens.
#[derive(Debug, Clone)]
pub struct ServiceOptions {
    /// seam's home: the socket, the token and the ledger are here.
    pub seam_home: PathBuf,
    /// Also listen on this TCP address (bearer token required).
    pub tcp: Option<SocketAddr>,
    /// Allow `tcp` to be a non-loopback address. The operator must ask.
    pub allow_non_loopback: bool,
    pub limits: ServiceLimits,
}

impl ServiceOptions {
    pub fn new(seam_home: impl Into<PathBuf>) -> Self {
        ServiceOptions {
            seam_home: seam_home.into(),
            tcp: None,
            allow_non_loopback: false,
            limits: ServiceLimits::default(),
        }
    }
}

/// Why the gate could not start.
#[derive(Debug, thiserror::Error)]
pub enum ServiceError {
    #[error("another gate is already listening on {path}; stop it first (or use that one)")]
    AlreadyListening { path: PathBuf },
    #[error("{path} exists and is not a socket; the gate will not remove it: move it away")]
    NotASocket { path: PathBuf },
    #[error(
        "refusing to listen on {addr}: it is not a loopback address, and anyone who can reach \
         it could call the gate's tools with the token; pass --allow-non-loopback if you mean it"
    )]
    NonLoopback { addr: SocketAddr },
    #[error("cannot listen on {what}")]
    Bind {
        what: String,
        #[source]
        source: std::io::Error,
    },
    #[error("the gate token {path} is unusable: {reason}")]
    Token { path: PathBuf, reason: String },
    #[error("cannot {action} {path}")]
    Io {
        action: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the toolbox does not require open turns; build it with Toolbox::requiring_open_turns")]
    TurnsNotRequired,
}

impl ServiceError {
    fn io(action: &'static str, path: &Path, source: std::io::Error) -> ServiceError {
        ServiceError::Io {
            action,
            path: path.to_path_buf(),
            source,
        }
    }
}

/// The HTTP status of a refusal (see the module doc).
pub fn status_for_refusal(code: RefusalCode) -> StatusCode {
    match code {
        RefusalCode::UnknownTool => StatusCode::NOT_FOUND,
        RefusalCode::InvalidParams | RefusalCode::UnknownTurn => StatusCode::BAD_REQUEST,
        RefusalCode::TimedOut => StatusCode::GATEWAY_TIMEOUT,
        RefusalCode::InvalidPath
        | RefusalCode::NotFound
        | RefusalCode::NotAFile
        | RefusalCode::ToolFailed
        | RefusalCode::Failed
        | RefusalCode::Unavailable => StatusCode::UNPROCESSABLE_ENTITY,
        // Policy refusals, and any code added later: the gate said no.
        _ => StatusCode::FORBIDDEN,
    }
}

/// Shared by every handler.
#[derive(Debug)]
pub(crate) struct AppState {
    toolbox: Arc<Toolbox>,
    /// The secret that opens a turn (keys/turn-opener).
    opener: BearerToken,
    limits: ServiceLimits,
    ledger_paths: LedgerPaths,
    /// Every blocking call, so shutdown can wait for them.
    tracker: TaskTracker,
    shutdown: CancellationToken,
    in_flight: AtomicU64,
    answered: AtomicU64,
    timed_out: AtomicU64,
}

/// A gate ready to serve `toolbox`; [`GateService::bind`] opens its listeners.
#[derive(Debug)]
pub struct GateService {
    toolbox: Arc<Toolbox>,
    options: ServiceOptions,
}

impl GateService {
    pub fn new(toolbox: Arc<Toolbox>, options: ServiceOptions) -> Self {
        GateService { toolbox, options }
    }

    /// Makes the token (first start), binds the socket and, if asked, the TCP
    /// address. Needs a tokio runtime. The caller should hold the ledger open
    /// (its lock) before this, so two gates on one home cannot race here.
    pub async fn bind(self) -> Result<BoundGate, ServiceError> {
        if !self.toolbox.turns_required() {
            return Err(ServiceError::TurnsNotRequired);
        }
        let home = &self.options.seam_home;
        let (token, token_created) = BearerToken::load_or_create(home)?;
        let opener = BearerToken::opener(home)?;
        let socket = listen::bind_socket(home)?;
        let tcp = match self.options.tcp {
            Some(addr) => match listen::bind_tcp(addr, self.options.allow_non_loopback).await {
                Ok(l) => Some(l),
                Err(e) => {
                    socket.file.remove();
                    return Err(e);
                }
            },
            None => None,
        };
        let tcp_addr = match &tcp {
            Some(l) => Some(l.local_addr().map_err(|e| ServiceError::Bind {
                what: "tcp".into(),
                source: e,
            })?),
            None => None,
        };
        let state = Arc::new(AppState {
            toolbox: self.toolbox,
            opener,
            limits: self.options.limits,
            ledger_paths: LedgerPaths::new(home),
            tracker: TaskTracker::new(),
            shutdown: CancellationToken::new(),
            in_flight: AtomicU64::new(0),
            answered: AtomicU64::new(0),
            timed_out: AtomicU64::new(0),
        });
        Ok(BoundGate {
            state,
            socket,
            tcp,
            tcp_addr,
            token,
            token_created,
            token_path: token_path(home),
        })
    }
}

/// A gate with its listeners open. [`BoundGate::serve`] runs it.
#[derive(Debug)]
pub struct BoundGate {
    state: Arc<AppState>,
    socket: listen::BoundSocket,
    tcp: Option<tokio::net::TcpListener>,
    tcp_addr: Option<SocketAddr>,
    token: BearerToken,
    token_created: bool,
    token_path: PathBuf,
}

/// What a gate did, when it stopped.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServeReport {
    /// Invocations answered with an envelope or a refusal from the toolbox.
    pub calls_answered: u64,
    /// Invocations answered 504: the gate stopped waiting.
    pub calls_timed_out: u64,
    /// Calls still running when the grace period ended (their ledger records
    /// may be missing if the process then exits).
    pub calls_unfinished: u64,
}

impl BoundGate {
    pub fn socket_path(&self) -> &Path {
        &self.socket.file.path
    }

    /// The TCP address, once bound (port 0 becomes the real port).
    pub fn tcp_addr(&self) -> Option<SocketAddr> {
        self.tcp_addr
    }

    /// Is the TCP listener on an address other hosts may reach?
    pub fn non_loopback(&self) -> bool {
        self.tcp_addr.is_some_and(|a| !a.ip().is_loopback())
    }

    pub fn token_path(&self) -> &Path {
        &self.token_path
    }

    /// True when this start made the token file.
    pub fn token_created(&self) -> bool {
        self.token_created
    }

    /// Serves until `shutdown` resolves, then shuts down gracefully (see the
    /// module doc) and removes the socket.
    pub async fn serve<F>(self, shutdown: F) -> Result<ServeReport, ServiceError>
    where
        F: Future<Output = ()> + Send + 'static,
    {
        let BoundGate {
            state,
            socket,
            tcp,
            token,
            ..
        } = self;
        let cancel = state.shutdown.clone();
        let stop = cancel.clone();
        let signal_task = tokio::spawn(async move {
            tokio::select! {
                () = shutdown => stop.cancel(),
                () = stop.cancelled() => {}
            }
        });

        let uid = rustix::process::geteuid().as_raw();
        let listen::BoundSocket {
            listener: unix_listener,
            file: socket_file,
        } = socket;
        let unix_listener = listen::OwnerOnly {
            inner: unix_listener,
            uid,
        };
        let unix_serve = axum::serve(
            unix_listener,
            routes::router(state.clone()).into_make_service_with_connect_info::<listen::PeerUid>(),
        )
        .with_graceful_shutdown(cancel.clone().cancelled_owned());
        let tcp_serve = tcp.map(|l| {
            let l = l.tap_io(|s| {
                let _ = s.set_nodelay(true);
            });
            axum::serve(l, routes::tcp_router(state.clone(), token))
                .with_graceful_shutdown(cancel.clone().cancelled_owned())
        });
        let both = async move {
            match tcp_serve {
                Some(t) => {
                    let (a, b) = tokio::join!(unix_serve, t);
                    a.and(b)
                }
                None => unix_serve.await,
            }
        };
        let grace = state.limits.shutdown_grace;
        let drained = async {
            cancel.cancelled().await;
            tokio::time::sleep(grace).await;
        };
        // axum's serve never fails (accept errors are retried), so the result
        // is ignored; draining longer than the grace period is cut short.
        tokio::select! {
            _ = both => {}
            () = drained => {}
        }
        cancel.cancel();
        let _ = signal_task.await;
        // The socket goes first, so nobody connects to a gate that is leaving.
        socket_file.remove();

        state.tracker.close();
        let _ = tokio::time::timeout(grace, state.tracker.wait()).await;
        Ok(ServeReport {
            calls_answered: state.answered.load(Ordering::Relaxed),
            calls_timed_out: state.timed_out.load(Ordering::Relaxed),
            calls_unfinished: state.tracker.len() as u64,
        })
    }
}

/// SIGTERM and SIGINT, caught from [`ShutdownSignals::register`] on (so
/// neither kills the process from then on).
#[derive(Debug)]
pub struct ShutdownSignals {
    term: tokio::signal::unix::Signal,
    int: tokio::signal::unix::Signal,
}

impl ShutdownSignals {
    /// Catches both signals now. Needs a tokio runtime.
    pub fn register() -> Result<ShutdownSignals, std::io::Error> {
        use tokio::signal::unix::{SignalKind, signal};
        Ok(ShutdownSignals {
            term: signal(SignalKind::terminate())?,
            int: signal(SignalKind::interrupt())?,
        })
    }

    /// Resolves on the next SIGTERM or SIGINT, naming it.
    pub async fn next(&mut self) -> &'static str {
        tokio::select! {
            _ = self.term.recv() => "SIGTERM",
            _ = self.int.recv() => "SIGINT",
        }
    }
}
