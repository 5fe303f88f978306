//! `seam gate`: the gate as a local service; and `seam invoke --gate`, one
//! call sent through it.

use std::net::SocketAddr;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context as _;
use seam_gate::LedgerHook;
use seam_gate::service::{
    GateService, ServeReport, ServiceError, ServiceLimits, ServiceOptions, ShutdownSignals,
};
use seam_protocol::Answer;

use crate::context::Context;
use crate::exit::{Exit, UsageError};
use crate::output;
use seam_agent::gate_client::{GateClient, GateEndpoint};

/// What `seam gate` was asked.
#[derive(Debug, Clone)]
pub struct GateArgs {
    pub listen: Option<SocketAddr>,
    pub allow_non_loopback: bool,
    pub call_timeout_secs: u64,
    pub max_body_bytes: usize,
    pub read_limit: u64,
    /// Stop (gracefully) when stdin reaches its end, as on SIGTERM.
    pub until_stdin_closes: bool,
    /// How long a call on "ask" waits for the operator.
    pub consent_timeout_secs: u64,
    /// Ask on this process's terminal (the gate `seam ask` starts), not over the socket.
    pub consent_tty: bool,
}

/// Resolves when stdin reaches its end (read on a thread of its own), or never.
fn stdin_end(watch: bool) -> impl Future<Output = ()> + Send + 'static {
    let (tx, rx) = tokio::sync::oneshot::channel::<()>();
    if watch {
        std::thread::spawn(move || {
            use std::io::Read as _;
            let mut sink = [0u8; 64];
            let mut stdin = std::io::stdin();
            while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
            let _ = tx.send(());
        });
    } else {
        std::mem::forget(tx);
    }
    async move {
        if rx.await.is_err() {
            std::future::pending::<()>().await;
        }
    }
}

/// Serves until SIGTERM or SIGINT, then stops gracefully and closes the ledger.
pub fn serve(ctx: &Context, args: GateArgs) -> anyhow::Result<Exit> {
    if args.call_timeout_secs == 0 {
        return Err(UsageError("--call-timeout must be at least 1 second".into()).into());
    }
    if args.consent_timeout_secs == 0 {
        return Err(UsageError("--consent-timeout must be at least 1 second".into()).into());
    }
    let home = ctx.ensure_home()?.to_path_buf();
    // The ledger's writer lock comes first: while this gate holds it, no other
    // gate (and no in-process `seam invoke`) can write this home's ledger.
    let ledger = Arc::new(ctx.open_ledger().context(
        "is another gate running on this seam home? (seam invoke without --gate also holds \
         the ledger while it runs)",
    )?);
    if let Some(r) = ledger.head_recovery() {
        output::notice(&format!(
            "the ledger's head was behind after an unclean stop: records {}..={} checked and the \
             head re-signed",
            r.from_seq + 1,
            r.to_seq
        ));
    }
    let hook: Arc<dyn LedgerHook> = ledger.clone();
    let desk = super::consent::desk_for_gate(
        ctx,
        Duration::from_secs(args.consent_timeout_secs),
        args.consent_tty,
    );
    let toolbox = Arc::new(
        super::invoke::toolbox_with(ctx, args.read_limit, hook)?
            .requiring_open_turns()
            .with_consent(desk),
    );
    let options = ServiceOptions {
        seam_home: home,
        tcp: args.listen,
        allow_non_loopback: args.allow_non_loopback,
        limits: ServiceLimits {
            max_body_bytes: args.max_body_bytes,
            call_timeout: Duration::from_secs(args.call_timeout_secs),
            ..ServiceLimits::default()
        },
    };

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .thread_name("seam-gate")
        .build()
        .context("starting the gate's runtime")?;
    let served: anyhow::Result<ServeReport> = runtime.block_on(async {
        let mut signals = ShutdownSignals::register().context("catching SIGTERM and SIGINT")?;
        let bound = GateService::new(toolbox.clone(), options)
            .bind()
            .await
            .map_err(|e| match e {
                ServiceError::NonLoopback { .. } => UsageError(e.to_string()).into(),
                other => anyhow::Error::from(other),
            })?;
        if bound.token_created() {
            output::notice(&format!(
                "made the gate's bearer token {} (owner-only)",
                bound.token_path().display()
            ));
        }
        output::notice(&format!(
            "gate listening on {} (owner-only unix socket)",
            bound.socket_path().display()
        ));
        if let Some(addr) = bound.tcp_addr() {
            output::notice(&format!(
                "gate listening on http://{addr}; every request needs Authorization: Bearer \
                 <the token in {}>",
                bound.token_path().display()
            ));
        }
        if bound.non_loopback() {
            output::notice(
                "WARNING: the gate listens on a non-loopback address (--allow-non-loopback): \
                 any machine that can reach it and holds the token can read the owner's files \
                 through it",
            );
        }
        let stdin_closed = stdin_end(args.until_stdin_closes);
        let stop = async move {
            let name = tokio::select! {
                name = signals.next() => name,
                () = stdin_closed => "stdin closed",
            };
            output::notice(&format!(
                "{name}: stopping; finishing the calls in flight (send it again to stop now)"
            ));
            tokio::spawn(async move {
                let again = signals.next().await;
                output::notice(&format!(
                    "{again} again: stopping now; the ledger's head is re-signed on the next start"
                ));
                std::process::exit(Exit::Internal as i32);
            });
        };
        Ok(bound.serve(stop).await?)
    });
    runtime.shutdown_timeout(Duration::from_secs(1));
    let report = served?;
    drop(toolbox);
    match Arc::try_unwrap(ledger) {
        Ok(ledger) => ledger.close().context("closing the ledger")?,
        Err(ledger) => ledger
            .sync_head()
            .context("writing the ledger's head with calls still running")?,
    }
    let mut summary = format!(
        "gate stopped: {} calls answered",
        report.calls_answered + report.calls_timed_out
    );
    if report.calls_timed_out > 0 {
        summary.push_str(&format!(" ({} after the timeout)", report.calls_timed_out));
    }
    if report.calls_unfinished > 0 {
        summary.push_str(&format!(
            "; {} calls were still running after the grace period and may be missing from the \
             ledger",
            report.calls_unfinished
        ));
    }
    summary.push_str("; the ledger is closed");
    output::notice(&summary);
    Ok(Exit::Ok)
}

/// `seam invoke --gate`: the call through the running gate, printed and
/// exited exactly like the in-process call.
pub fn invoke(
    ctx: &Context,
    tool: &str,
    params: &str,
    turn: Option<String>,
    gate_url: Option<&str>,
) -> anyhow::Result<Exit> {
    let params = super::invoke::read_params(params)?;
    let endpoint = match gate_url {
        Some(url) => GateEndpoint::from_url(url, &ctx.seam_home).map_err(|e| match e {
            seam_agent::gate_client::GateClientError::BadUrl { .. } => {
                UsageError(e.to_string()).into()
            }
            other => anyhow::Error::from(other),
        })?,
        None => GateEndpoint::unix_in(&ctx.seam_home),
    };
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the client's runtime")?;
    // The owner's own client: it presents the turn opener, so a call without --turn runs
    // in a turn of its own. A --turn names a turn by id alone, which the gate refuses
    // unless the call also holds that turn's token (only its opener has it).
    let mut client = GateClient::new(endpoint);
    if let Ok(opener) = seam_agent::gate_client::read_opener(&ctx.seam_home) {
        client = client.with_opener(opener);
    }
    let turn = turn.map(|t| seam_protocol::wire::TurnOpened {
        turn: t,
        token: String::new(),
    });
    let invoked = runtime.block_on(client.invoke(tool, params, turn.as_ref()))?;
    output::json(&invoked.answer);
    Ok(match &invoked.answer {
        Answer::Envelope(_) => Exit::Ok,
        Answer::Refusal(r) if r.refused.code.is_invalid_input() => Exit::Usage,
        Answer::Refusal(_) => Exit::Refused,
    })
}
