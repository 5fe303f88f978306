//! The turn is opened outside the agent's walls, by a process of its own.
//!
//! Opening a turn takes the turn opener (`keys/turn-opener` in seam's home). If the
//! launcher read it into its own memory, the agent (the same process, confined a moment
//! later) could find it there after its walls went up, and a compromised agent could open
//! a fresh, untainted turn. So `seam ask` runs `seam __open-turn` as a child process before
//! the walls: the child reads the opener, opens the turn, prints `{turn, token}` and exits.
//! The agent holds the turn's token (it must, to call in its turn) and never the opener.
//!
//! The same child gives the gate the **operator's words** for the turn: the task (in the
//! request that opens it) and the text of each attached file (read through the gate's
//! `files.read` in the turn, then registered with the opener). In a tainted turn an egress
//! call may still reach a destination those words name; since registering takes the opener,
//! nothing the agent reads or writes later can be added to them.

use std::io::{Read as _, Write as _};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use anyhow::Context as _;
use seam_agent::gate_client::{GateClient, GateClientError, GateEndpoint, read_opener};
use seam_protocol::wire::TurnOpened;
use serde::{Deserialize, Serialize};

use crate::context::Context;
use crate::exit::{Exit, RefusedError, UsageError};
use crate::output;

/// What `seam __open-turn` reads on stdin (JSON; empty: no words, no attachments).
#[derive(Debug, Default, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
struct OpenTurnInput {
    /// The operator's task: the operator's words for the turn.
    #[serde(default)]
    task: String,
    /// Files the operator attached (absolute paths): read through the gate in the turn, and
    /// their text registered as the operator's words too.
    #[serde(default)]
    attach: Vec<PathBuf>,
}

/// An attached file as the child read it.
#[derive(Debug, Serialize, Deserialize)]
struct AttachmentOut {
    path: String,
    text: String,
    bytes: u64,
    cut: bool,
}

/// What `seam __open-turn` prints.
#[derive(Serialize, Deserialize)]
struct OpenTurnOutput {
    turn: String,
    token: String,
    /// Absent when nothing was attached: the output is then a `TurnOpened`.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    attachments: Vec<AttachmentOut>,
}

/// `seam __open-turn`: open a turn (with the operator's words on stdin) and print it (id
/// and token) and the attached files' text as JSON.
pub fn run(ctx: &Context, gate_url: Option<&str>) -> anyhow::Result<Exit> {
    let endpoint = match gate_url {
        Some(url) => GateEndpoint::from_url(url, &ctx.seam_home).map_err(|e| match e {
            GateClientError::BadUrl { .. } => UsageError(e.to_string()).into(),
            other => anyhow::Error::from(other),
        })?,
        None => GateEndpoint::unix_in(&ctx.seam_home),
    };
    let mut raw = String::new();
    std::io::stdin()
        .read_to_string(&mut raw)
        .context("reading the turn's request on stdin")?;
    let input: OpenTurnInput = if raw.trim().is_empty() {
        OpenTurnInput::default()
    } else {
        serde_json::from_str(&raw)
            .map_err(|e| UsageError(format!("the turn's request on stdin is not valid: {e}")))?
    };
    let opener = read_opener(&ctx.seam_home)?;
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the runtime that opens the turn")?;
    let out = runtime.block_on(async {
        let mut client = GateClient::new(endpoint.clone()).with_opener(opener);
        let words: Vec<String> = if input.task.trim().is_empty() {
            Vec::new()
        } else {
            vec![input.task.clone()]
        };
        let turn = client.open_turn_with(&words).await?;
        let attachments = super::read_attachments(&endpoint, &turn, &input.attach).await?;
        let texts: Vec<String> = attachments.iter().map(|a| a.text.clone()).collect();
        if !texts.is_empty() {
            client
                .add_operator_words(&turn, &texts)
                .await
                .context("registering the attached files' text as the operator's words")?;
        }
        Ok::<_, anyhow::Error>(OpenTurnOutput {
            turn: turn.turn.clone(),
            token: turn.token.clone(),
            attachments: attachments
                .into_iter()
                .map(|a| AttachmentOut {
                    path: a.path,
                    text: a.text,
                    bytes: a.bytes,
                    cut: a.cut,
                })
                .collect(),
        })
    })?;
    output::json(&out);
    Ok(Exit::Ok)
}

/// Runs `seam __open-turn` for `seam_home`: opens the turn with `task` as the operator's
/// words, reads `attach` through the gate in it (their text registered as the operator's
/// words too), and returns the turn and the attachments.
pub fn open_outside(
    seam_home: &Path,
    gate_url: Option<&str>,
    task: &str,
    attach: &[PathBuf],
) -> anyhow::Result<(TurnOpened, Vec<seam_local::Attachment>)> {
    let exe = std::env::current_exe().context("finding the seam binary to open the turn")?;
    let mut cmd = Command::new(exe);
    cmd.arg("--home").arg(seam_home).arg("__open-turn");
    if let Some(url) = gate_url {
        cmd.arg("--gate-url").arg(url);
    }
    let mut absolute = Vec::new();
    for f in attach {
        absolute
            .push(std::path::absolute(f).with_context(|| format!("resolving {}", f.display()))?);
    }
    let input = serde_json::to_vec(&OpenTurnInput {
        task: task.to_owned(),
        attach: absolute,
    })?;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .context("running seam __open-turn")?;
    if let Some(mut stdin) = child.stdin.take() {
        stdin
            .write_all(&input)
            .context("giving seam __open-turn the turn's request")?;
    }
    let out = child
        .wait_with_output()
        .context("running seam __open-turn")?;
    if !out.status.success() {
        let why = seam_term::on_one_line(&out.stderr);
        if out.status.code() == Some(Exit::Refused as i32) {
            return Err(RefusedError(why.to_string()).into());
        }
        anyhow::bail!("the turn could not be opened with the gate: {why}");
    }
    let opened: OpenTurnOutput =
        serde_json::from_slice(&out.stdout).context("reading the turn seam __open-turn printed")?;
    // Each attachment is shown by the path the operator gave.
    let attachments = opened
        .attachments
        .into_iter()
        .zip(attach)
        .map(|(a, given)| seam_local::Attachment {
            path: given.display().to_string(),
            text: a.text,
            bytes: a.bytes,
            cut: a.cut,
        })
        .collect();
    Ok((
        TurnOpened {
            turn: opened.turn,
            token: opened.token,
        },
        attachments,
    ))
}
