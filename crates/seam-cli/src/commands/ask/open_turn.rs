//! The turn is opened outside the agent's walls, by a process of its own.
//!
//! Opening a turn takes the turn opener (`keys/turn-opener` in seam's home). If the
//! launcher read it into its own memory, the agent (the same process, confined a moment
//! later) could find it there after its walls went up, and a compromised agent could open
//! a fresh, untainted turn. So `seam ask` runs `seam __open-turn` as a child process before
//! the walls: the child reads the opener, opens the turn, prints `{turn, token}` and exits.
//! The agent holds the turn's token (it must, to call in its turn) and never the opener.

use std::path::Path;
use std::process::{Command, Stdio};

use anyhow::Context as _;
use seam_agent::gate_client::{GateClient, GateClientError, GateEndpoint, read_opener};
use seam_protocol::wire::TurnOpened;

use crate::context::Context;
use crate::exit::{Exit, UsageError};
use crate::output;

/// `seam __open-turn`: open a turn and print it (id and token) as JSON.
pub fn run(ctx: &Context, gate_url: Option<&str>) -> anyhow::Result<Exit> {
    let endpoint = match gate_url {
        Some(url) => GateEndpoint::from_url(url, &ctx.seam_home).map_err(|e| match e {
            GateClientError::BadUrl { .. } => UsageError(e.to_string()).into(),
            other => anyhow::Error::from(other),
        })?,
        None => GateEndpoint::unix_in(&ctx.seam_home),
    };
    let opener = read_opener(&ctx.seam_home)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime that opens the turn")?;
    let turn = runtime.block_on(async {
        GateClient::new(endpoint)
            .with_opener(opener)
            .open_turn()
            .await
    })?;
    output::json(&turn);
    Ok(Exit::Ok)
}

/// Runs `seam __open-turn` for `seam_home` and returns the turn it opened.
pub fn open_outside(seam_home: &Path, gate_url: Option<&str>) -> anyhow::Result<TurnOpened> {
    let exe = std::env::current_exe().context("finding the seam binary to open the turn")?;
    let mut cmd = Command::new(exe);
    cmd.arg("--home").arg(seam_home).arg("__open-turn");
    if let Some(url) = gate_url {
        cmd.arg("--gate-url").arg(url);
    }
    let out = cmd
        .stdin(Stdio::null())
        .stderr(Stdio::piped())
        .output()
        .context("running seam __open-turn")?;
    if !out.status.success() {
        anyhow::bail!(
            "the turn could not be opened with the gate: {}",
            seam_term::on_one_line(&out.stderr)
        );
    }
    serde_json::from_slice(&out.stdout).context("reading the turn seam __open-turn printed")
}
