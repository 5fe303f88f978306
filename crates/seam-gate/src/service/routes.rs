//! The handlers of `/v1`.

use std::sync::Arc;
use std::sync::atomic::Ordering;

use axum::Extension;
use axum::Router;
use axum::body::{Body, Bytes};
use axum::extract::{ConnectInfo, Path as UrlPath, Request, State};
use axum::http::{HeaderMap, HeaderValue, StatusCode, header};
use axum::middleware::{self, Next};
use axum::response::{IntoResponse, Response};
use axum::routing::{get, post};
use seam_protocol::{Answer, Refusal, RefusalBody, RefusalCode};
use serde::Serialize;

use super::auth::BearerToken;
use super::listen::PeerUid;
use super::wire::{
    ConsentAnswerRequest, ErrorBody, Health, InvokeRequest, OpenTurnRequest, OperatorWordsRequest,
    TURN_HEADER, TURN_OPENER_HEADER, TURN_TAINTED_HEADER, TURN_TOKEN_HEADER, TurnOpened, TurnState,
};
use super::{AppState, status_for_refusal, stream};
use seam_toolbox::CallRequest;

/// The routes, for either listener. The TCP one adds [`require_bearer`].
pub(crate) fn router(state: Arc<AppState>) -> Router {
    Router::new()
        .route("/v1/health", get(health))
        .route("/v1/tools", get(tools))
        .route("/v1/invoke", post(invoke))
        .route("/v1/turns", post(open_turn))
        .route("/v1/turns/{id}", get(turn_state).delete(close_turn))
        .route("/v1/turns/{id}/taint", post(taint_turn))
        .route("/v1/turns/{id}/operator-words", post(add_operator_words))
        .route("/v1/ledger/stream", get(stream::ledger_stream))
        .route("/v1/consents", get(consents))
        .route("/v1/consents/{id}", post(answer_consent))
        // MCP over streamable HTTP: the same toolbox, every call through Toolbox::call. A
        // session is a turn of its own, fresh and untainted, so opening one takes the turn
        // opener like POST /v1/turns: the confined agent, which reaches this socket, holds
        // its own turn's token and never the opener.
        .merge(
            Router::new()
                .nest_service(
                    "/mcp",
                    crate::mcp::http_service(state.toolbox.clone(), state.shutdown.clone()),
                )
                .layer(middleware::from_fn_with_state(
                    state.clone(),
                    require_opener_for_mcp,
                )),
        )
        .fallback(not_found)
        .with_state(state)
}

/// The TCP listener's router: every request carries the bearer token, or
/// gets 401 before any handler runs.
pub(crate) fn tcp_router(state: Arc<AppState>, token: BearerToken) -> Router {
    router(state).layer(middleware::from_fn_with_state(token, require_bearer))
}

async fn require_opener_for_mcp(
    State(state): State<Arc<AppState>>,
    request: Request,
    next: Next,
) -> Response {
    let opener = request
        .headers()
        .get(TURN_OPENER_HEADER)
        .map(HeaderValue::as_bytes);
    if state.opener.is(opener) {
        return next.run(request).await;
    }
    error(
        StatusCode::FORBIDDEN,
        format!(
            "an MCP session is a turn of its own, and opening a turn takes the turn opener \
             (header {TURN_OPENER_HEADER}: the secret in seam's home at keys/turn-opener)"
        ),
    )
}

async fn require_bearer(
    State(token): State<BearerToken>,
    request: Request,
    next: Next,
) -> Response {
    let auth = request
        .headers()
        .get(header::AUTHORIZATION)
        .map(HeaderValue::as_bytes);
    if token.admits(auth) {
        return next.run(request).await;
    }
    let mut response = error(
        StatusCode::UNAUTHORIZED,
        "this listener requires Authorization: Bearer <token>, the token in seam's home \
         at keys/gate.token",
    );
    response
        .headers_mut()
        .insert(header::WWW_AUTHENTICATE, HeaderValue::from_static("Bearer"));
    response
}

pub(crate) fn json<T: Serialize>(status: StatusCode, body: &T) -> Response {
    match serde_json::to_vec(body) {
        Ok(bytes) => (
            status,
            [(
                header::CONTENT_TYPE,
                HeaderValue::from_static("application/json"),
            )],
            bytes,
        )
            .into_response(),
        Err(e) => (
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("cannot serialise the answer: {e}"),
        )
            .into_response(),
    }
}

pub(crate) fn error(status: StatusCode, message: impl Into<String>) -> Response {
    json(
        status,
        &ErrorBody {
            error: message.into(),
        },
    )
}

async fn not_found() -> Response {
    error(
        StatusCode::NOT_FOUND,
        "no such endpoint; the gate serves GET /v1/health, GET /v1/tools, POST /v1/invoke, \
         POST /v1/turns, GET|DELETE /v1/turns/{id}, POST /v1/turns/{id}/taint, POST /v1/turns/{id}/operator-words, GET /v1/ledger/stream, GET /v1/consents, POST /v1/consents/{id}, \
         MCP at /mcp",
    )
}

async fn health(State(state): State<Arc<AppState>>) -> Response {
    let status = if state.shutdown.is_cancelled() {
        "stopping"
    } else {
        "ok"
    };
    json(
        StatusCode::OK,
        &Health {
            status: status.to_owned(),
            version: env!("CARGO_PKG_VERSION").to_owned(),
            tools: state.toolbox.decls().count(),
            in_flight: state.in_flight.load(Ordering::Relaxed),
        },
    )
}

async fn tools(State(state): State<Arc<AppState>>) -> Response {
    json(StatusCode::OK, &state.toolbox.specs())
}

/// Most bytes of an oversized body read and thrown away before the 413 is
/// sent, so that a client still writing it can read the answer; beyond this
/// the connection is simply closed.
const DRAIN_CAP: usize = 16 * 1024 * 1024;

/// Reads the whole body, or answers 413 once it passes the limit.
pub(crate) async fn read_body(
    state: &AppState,
    headers: &HeaderMap,
    body: Body,
) -> Result<Bytes, Response> {
    use http_body_util::BodyExt;
    let limit = state.limits.max_body_bytes;
    let too_large = || {
        error(
            StatusCode::PAYLOAD_TOO_LARGE,
            format!("the request body is larger than the gate's limit of {limit} bytes"),
        )
    };
    let declared = headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let mut body = body;
    let mut kept: Vec<u8> = Vec::new();
    let mut seen: usize = 0;
    let over = declared.is_some_and(|n| n > limit as u64);
    if !over {
        loop {
            match body.frame().await {
                None => return Ok(Bytes::from(kept)),
                Some(Ok(frame)) => {
                    if let Ok(data) = frame.into_data() {
                        seen += data.len();
                        if seen > limit {
                            break;
                        }
                        kept.extend_from_slice(&data);
                    }
                }
                Some(Err(e)) => {
                    return Err(error(
                        StatusCode::BAD_REQUEST,
                        format!("could not read the request body: {e}"),
                    ));
                }
            }
        }
    }
    // Over the limit: drain (bounded), then answer.
    drop(kept);
    while seen <= DRAIN_CAP {
        match body.frame().await {
            Some(Ok(frame)) => {
                if let Ok(data) = frame.into_data() {
                    seen += data.len();
                }
            }
            _ => break,
        }
    }
    Err(too_large())
}

async fn invoke(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    let bytes = match read_body(&state, &headers, body).await {
        Ok(b) => b,
        Err(response) => return response,
    };
    let req: InvokeRequest = match serde_json::from_slice(&bytes) {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!(
                    "the body is not an invoke request ({e}); send \
                     {{\"tool\": NAME, \"params\": {{…}}, \"turn\": ID}} (turn optional)"
                ),
            );
        }
    };

    // A call without a turn, from a client holding the turn opener, runs in a turn of its
    // own, opened and closed here. Any other call must name a turn and its token.
    let opener = state
        .opener
        .is(headers.get(TURN_OPENER_HEADER).map(HeaderValue::as_bytes));
    let (turn, one_call) = match (req.turn, opener) {
        (Some(t), _) => (Some(t), false),
        (None, true) => (Some(state.toolbox.open_turn().0), true),
        (None, false) => (None, false),
    };
    let token = req.token;
    let invocation_id = uuid::Uuid::now_v7().to_string();
    let tool = req.tool.clone();
    let call = CallRequest {
        tool: req.tool,
        params: req.params,
        turn: turn.clone(),
    };
    let turn = turn.unwrap_or_default();

    let toolbox = state.toolbox.clone();
    let counters = state.clone();
    let (id, turn_in_call) = (invocation_id.clone(), turn.clone());
    counters.in_flight.fetch_add(1, Ordering::Relaxed);
    let task = state.tracker.spawn_blocking(move || {
        let answer = if one_call {
            toolbox.call_as(id, call)
        } else {
            toolbox.call_as_client(id, call, token.as_deref())
        };
        let tainted = toolbox.is_tainted(&turn_in_call);
        if one_call {
            toolbox.close_turn(&turn_in_call);
        }
        counters.in_flight.fetch_sub(1, Ordering::Relaxed);
        (answer, tainted)
    });

    // The call timeout does not count time spent waiting for the operator's consent.
    let started = tokio::time::Instant::now();
    let mut task = task;
    let finished = loop {
        let mut deadline = started + state.limits.call_timeout;
        if let Some((waited, waiting)) = state
            .toolbox
            .consent_desk()
            .and_then(|d| d.waited(&invocation_id))
        {
            deadline = if waiting {
                tokio::time::Instant::now() + state.limits.call_timeout
            } else {
                deadline + waited
            };
        }
        match tokio::time::timeout_at(deadline, &mut task).await {
            Ok(done) => break Ok(done),
            Err(elapsed) => {
                let extended = state
                    .toolbox
                    .consent_desk()
                    .and_then(|d| d.waited(&invocation_id))
                    .is_some_and(|(waited, waiting)| {
                        waiting || started + state.limits.call_timeout + waited > deadline
                    });
                if !extended {
                    break Err(elapsed);
                }
            }
        }
    };
    let (answer, tainted) = match finished {
        Ok(Ok((Ok(answer), tainted))) => (answer, tainted),
        Ok(Ok((Err(gate_error), _))) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the gate could not govern the call, so it is not answered: {gate_error}"),
            );
        }
        Ok(Err(join_error)) => {
            return error(
                StatusCode::INTERNAL_SERVER_ERROR,
                format!("the call's worker failed: {join_error}"),
            );
        }
        Err(_elapsed) => {
            state.timed_out.fetch_add(1, Ordering::Relaxed);
            let refusal = Refusal {
                invocation_id,
                tool,
                refused: RefusalBody {
                    code: RefusalCode::TimedOut,
                    message: format!(
                        "the gate stopped waiting after {} ms: the call is still running, \
                         may still have its effect, and the ledger records its outcome \
                         under this invocation id when it ends",
                        state.limits.call_timeout.as_millis()
                    ),
                },
            };
            let mut response = json(StatusCode::GATEWAY_TIMEOUT, &refusal);
            set_turn_headers(&mut response, &turn, state.toolbox.is_tainted(&turn));
            return response;
        }
    };
    state.answered.fetch_add(1, Ordering::Relaxed);
    let status = match &answer {
        Answer::Envelope(_) => StatusCode::OK,
        Answer::Refusal(r) => status_for_refusal(r.refused.code),
    };
    let mut response = json(status, &answer);
    set_turn_headers(&mut response, &turn, tainted);
    response
}

fn set_turn_headers(response: &mut Response, turn: &str, tainted: bool) {
    // A turn the gate opened is ASCII; a caller's turn that is not a valid
    // header value is left out (it was refused as not open anyway).
    if let Ok(v) = HeaderValue::from_str(turn) {
        response.headers_mut().insert(TURN_HEADER, v);
    }
    response.headers_mut().insert(
        TURN_TAINTED_HEADER,
        HeaderValue::from_static(if tainted { "true" } else { "false" }),
    );
}

async fn open_turn(State(state): State<Arc<AppState>>, headers: HeaderMap, body: Body) -> Response {
    if !state
        .opener
        .is(headers.get(TURN_OPENER_HEADER).map(HeaderValue::as_bytes))
    {
        return error(
            StatusCode::FORBIDDEN,
            format!(
                "opening a turn takes the turn opener (header {TURN_OPENER_HEADER}: the secret \
                 in seam's home at keys/turn-opener), which the agent does not hold: its turn \
                 is opened for it by whoever launched it"
            ),
        );
    }
    let bytes = match read_body(&state, &headers, body).await {
        Ok(b) => b,
        Err(response) => return response,
    };
    let req: OpenTurnRequest = if bytes.iter().all(u8::is_ascii_whitespace) {
        OpenTurnRequest::default()
    } else {
        match serde_json::from_slice(&bytes) {
            Ok(r) => r,
            Err(e) => {
                return error(
                    StatusCode::BAD_REQUEST,
                    format!(
                        "the body is not a turn request ({e}); send nothing, or \
                         {{\"operator_words\": [TEXT, …]}}"
                    ),
                );
            }
        }
    };
    let (turn, token) = state.toolbox.open_turn_with(&req.operator_words);
    json(
        StatusCode::CREATED,
        &TurnOpened {
            turn,
            token: token.secret().to_owned(),
        },
    )
}

/// May this request answer for the operator? Only on the unix socket (whose peer the kernel
/// vouches for: the gate's own user) and only with the turn opener, which the agent never
/// holds. Ok: the peer's uid.
fn operator(
    state: &AppState,
    headers: &HeaderMap,
    peer: Option<Extension<ConnectInfo<PeerUid>>>,
) -> Result<u32, Box<Response>> {
    let Some(Extension(ConnectInfo(PeerUid(uid)))) = peer else {
        return Err(Box::new(error(
            StatusCode::FORBIDDEN,
            "consent is given on the gate's owner-only unix socket (seam consent), not over TCP",
        )));
    };
    if !state
        .opener
        .is(headers.get(TURN_OPENER_HEADER).map(HeaderValue::as_bytes))
    {
        return Err(Box::new(error(
            StatusCode::FORBIDDEN,
            format!(
                "answering for the operator takes the turn opener (header {TURN_OPENER_HEADER}: \
                 the secret in seam's home at keys/turn-opener), which the agent does not hold"
            ),
        )));
    }
    Ok(uid)
}

fn no_desk() -> Response {
    error(
        StatusCode::NOT_FOUND,
        "this gate takes no consent over its socket (a gate started by seam ask asks on its \
         terminal)",
    )
}

async fn consents(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    peer: Option<Extension<ConnectInfo<PeerUid>>>,
) -> Response {
    if let Err(response) = operator(&state, &headers, peer) {
        return *response;
    }
    let Some(desk) = state.toolbox.consent_desk() else {
        return no_desk();
    };
    let now = std::time::Instant::now();
    let pending: Vec<_> = desk.pending().iter().map(|c| c.to_wire(now)).collect();
    json(StatusCode::OK, &pending)
}

async fn answer_consent(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    peer: Option<Extension<ConnectInfo<PeerUid>>>,
    UrlPath(id): UrlPath<String>,
    body: Body,
) -> Response {
    let uid = match operator(&state, &headers, peer) {
        Ok(uid) => uid,
        Err(response) => return *response,
    };
    let Some(desk) = state.toolbox.consent_desk().cloned() else {
        return no_desk();
    };
    if !desk.takes_socket_answers() {
        return no_desk();
    }
    let bytes = match read_body(&state, &headers, body).await {
        Ok(b) => b,
        Err(response) => return response,
    };
    let req: ConsentAnswerRequest = match serde_json::from_slice(&bytes) {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!(
                    "the body is not a consent answer ({e}); send {{\"answer\": \"once\"}} \
                     (or \"turn\", \"always\", \"deny\")"
                ),
            );
        }
    };
    // An "always" writes the policy file: off the async threads.
    let answered = tokio::task::spawn_blocking(move || {
        desk.answer(&id, req.answer, crate::consent::ConsentBy::Socket { uid })
    })
    .await;
    match answered {
        Ok(Ok(())) => StatusCode::NO_CONTENT.into_response(),
        Ok(Err(e @ crate::consent::AnswerError::NotPending(_))) => {
            error(StatusCode::NOT_FOUND, e.to_string())
        }
        Ok(Err(e)) => error(StatusCode::CONFLICT, e.to_string()),
        Err(e) => error(
            StatusCode::INTERNAL_SERVER_ERROR,
            format!("the answer's worker failed: {e}"),
        ),
    }
}

/// Is `id` an open turn, and does the request present its token?
fn holds_turn(state: &AppState, headers: &HeaderMap, id: &str) -> bool {
    let token = headers.get(TURN_TOKEN_HEADER).and_then(|v| v.to_str().ok());
    state.toolbox.turn_admits(id, token)
}

const NOT_HELD: &str = "no open turn has this id, or the request did not present its token \
                        (header seam-turn-token)";

async fn turn_state(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
) -> Response {
    if !holds_turn(&state, &headers, &id) {
        return error(StatusCode::NOT_FOUND, NOT_HELD);
    }
    let tainted = state.toolbox.is_tainted(&id);
    json(StatusCode::OK, &TurnState { turn: id, tainted })
}

async fn close_turn(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
) -> Response {
    if holds_turn(&state, &headers, &id) && state.toolbox.close_turn(&id) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        error(StatusCode::NOT_FOUND, NOT_HELD)
    }
}

/// The agent's local tools that hand the model the owner's data, or text a model wrote
/// in an earlier turn, taint the turn here. Taint only ever grows.
async fn taint_turn(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
) -> Response {
    if holds_turn(&state, &headers, &id) && state.toolbox.taint_turn(&id) {
        StatusCode::NO_CONTENT.into_response()
    } else {
        error(StatusCode::NOT_FOUND, NOT_HELD)
    }
}

/// More of the operator's words for an open turn (an attached file read after it opened).
/// Takes the turn opener *and* the turn's token: the agent holds the token, never the
/// opener, so it cannot make a value it read somewhere the operator's.
async fn add_operator_words(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    UrlPath(id): UrlPath<String>,
    body: Body,
) -> Response {
    if !state
        .opener
        .is(headers.get(TURN_OPENER_HEADER).map(HeaderValue::as_bytes))
    {
        return error(
            StatusCode::FORBIDDEN,
            format!(
                "the operator's words for a turn are given by whoever opened it, with the turn \
                 opener (header {TURN_OPENER_HEADER}), which the agent does not hold"
            ),
        );
    }
    if !holds_turn(&state, &headers, &id) {
        return error(StatusCode::NOT_FOUND, NOT_HELD);
    }
    let bytes = match read_body(&state, &headers, body).await {
        Ok(b) => b,
        Err(response) => return response,
    };
    let req: OperatorWordsRequest = match serde_json::from_slice(&bytes) {
        Ok(r) => r,
        Err(e) => {
            return error(
                StatusCode::BAD_REQUEST,
                format!("the body is not {{\"text\": [TEXT, …]}} ({e})"),
            );
        }
    };
    for text in &req.text {
        if !state.toolbox.add_operator_words(&id, text) {
            return error(StatusCode::NOT_FOUND, NOT_HELD);
        }
    }
    StatusCode::NO_CONTENT.into_response()
}
