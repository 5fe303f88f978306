//! `GET /v1/ledger/stream`: new ledger records as server-sent events.
//!
//! Each event is `event: record`, `id: <seq>`, `data: <the record as one JSON
//! line>` (the `seam ledger export --json` format). The stream starts after
//! `?after=SEQ`, or after the `Last-Event-ID` a reconnecting client sends, or
//! else after the last record at connect time (only new records). It polls the
//! ledger read-only by seq, so it sees every record whoever appended it, in
//! order and without gaps. It ends when the gate shuts down.

use std::collections::VecDeque;
use std::convert::Infallible;
use std::sync::Arc;

use axum::extract::State;
use axum::http::{HeaderMap, StatusCode, Uri};
use axum::response::sse::{Event, KeepAlive, Sse};
use axum::response::{IntoResponse, Response};
use seam_ledger::{LedgerReader, Record};
use tokio_util::sync::CancellationToken;

use super::AppState;
use super::routes::error;

/// Records fetched per poll.
const BATCH: usize = 256;

struct Follow {
    reader: Option<LedgerReader>,
    after: u64,
    pending: VecDeque<Record>,
    shutdown: CancellationToken,
    poll: std::time::Duration,
}

fn start_seq(headers: &HeaderMap, uri: &Uri) -> Result<Option<u64>, String> {
    if let Some(v) = headers.get("last-event-id") {
        let s = v
            .to_str()
            .map_err(|_| "Last-Event-ID is not text".to_owned())?;
        return s
            .trim()
            .parse()
            .map(Some)
            .map_err(|_| format!("Last-Event-ID {s:?} is not a ledger seq"));
    }
    for pair in uri.query().unwrap_or("").split('&') {
        if let Some(v) = pair.strip_prefix("after=") {
            return v
                .parse()
                .map(Some)
                .map_err(|_| format!("after={v:?} is not a ledger seq"));
        }
    }
    Ok(None)
}

pub(crate) async fn ledger_stream(
    State(state): State<Arc<AppState>>,
    headers: HeaderMap,
    uri: Uri,
) -> Response {
    let start = match start_seq(&headers, &uri) {
        Ok(s) => s,
        Err(message) => return error(StatusCode::BAD_REQUEST, message),
    };
    let paths = state.ledger_paths.clone();
    let opened = tokio::task::spawn_blocking(move || {
        let reader = LedgerReader::open_paths(paths)?;
        let after = match start {
            Some(s) => s,
            None => reader.last_seq()?,
        };
        Ok::<_, seam_ledger::LedgerError>((reader, after))
    })
    .await;
    let (reader, after) = match opened {
        Ok(Ok(x)) => x,
        Ok(Err(e)) => {
            return error(
                StatusCode::SERVICE_UNAVAILABLE,
                format!("cannot read the ledger: {e}"),
            );
        }
        Err(e) => return error(StatusCode::INTERNAL_SERVER_ERROR, e.to_string()),
    };
    let follow = Follow {
        reader: Some(reader),
        after,
        pending: VecDeque::new(),
        shutdown: state.shutdown.clone(),
        poll: state.limits.stream_poll,
    };
    let events = futures_util::stream::unfold(follow, next_event);
    Sse::new(events)
        .keep_alive(KeepAlive::default())
        .into_response()
}

async fn next_event(mut f: Follow) -> Option<(Result<Event, Infallible>, Follow)> {
    loop {
        if let Some(record) = f.pending.pop_front() {
            let event = Event::default()
                .event("record")
                .id(record.seq.to_string())
                .data(record.to_json_line());
            return Some((Ok(event), f));
        }
        if f.shutdown.is_cancelled() {
            return None;
        }
        let reader = f.reader.take()?;
        let after = f.after;
        let (reader, fetched) = tokio::task::spawn_blocking(move || {
            let fetched = reader.records_after(after, BATCH);
            (reader, fetched)
        })
        .await
        .ok()?;
        match fetched {
            Ok(records) if !records.is_empty() => {
                f.reader = Some(reader);
                if let Some(last) = records.last() {
                    f.after = last.seq;
                }
                f.pending.extend(records);
            }
            Ok(_) => {
                f.reader = Some(reader);
                tokio::select! {
                    () = f.shutdown.cancelled() => return None,
                    () = tokio::time::sleep(f.poll) => {}
                }
            }
            Err(e) => {
                // Said once, then the stream ends (the reader is not put back).
                let event = Event::default()
                    .event("error")
                    .data(format!("cannot read the ledger: {e}").replace(['\n', '\r'], " "));
                return Some((Ok(event), f));
            }
        }
    }
}
