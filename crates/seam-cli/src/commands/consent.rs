//! Consent: the gate's desk wired to its channels, the terminal prompt, and
//! `seam consent list|approve|deny` (the owner's answers over a running gate's socket).
//!
//! The gate decides (seam-gate's `consent` module); this module asks and prints. Under
//! `seam ask` the gate child, started before the agent's walls, asks on its own `/dev/tty`
//! (`--consent-tty`); a service gate takes answers over its owner-only socket, with the turn
//! opener the agent never holds.

use std::sync::Arc;
use std::sync::mpsc::Receiver;
use std::time::Duration;

use anyhow::Context as _;
use seam_agent::gate_client::{GateClient, GateEndpoint};
use seam_gate::ConsentDesk;
use seam_gate::consent::{AnswerError, ConsentBy, ConsentReply, PendingCall, PendingConsent};
use serde_json::Value;

use crate::cli::ConsentCommand;
use crate::context::Context;
use crate::exit::{Exit, UsageError};
use crate::output;

/// The desk of a gate this process runs: a terminal one (`--consent-tty`; none when there is
/// no terminal, so "ask" refuses at once) or a socket one (a service), writing "always"
/// rules to the policy file in use (or policy.toml in seam's home).
pub fn desk_for_gate(ctx: &Context, timeout: Duration, tty: bool) -> Arc<ConsentDesk> {
    let rule_file = ctx.policy.rule_file();
    let env = ctx.policy.env().clone();
    let writer: seam_gate::consent::RuleWriter = Box::new(move |tool| {
        seam_policy::add_consent_always(&rule_file, tool, &env)
            .map(drop)
            .map_err(|e| e.to_string())
    });
    let desk = ConsentDesk::new(timeout).with_rule_writer(writer);
    if !tty {
        return Arc::new(desk.with_socket());
    }
    let desk = Arc::new(desk);
    match output::Tty::open() {
        Ok(terminal) => {
            let calls = desk.attach_terminal();
            let asking = desk.clone();
            std::thread::Builder::new()
                .name("seam-consent-tty".into())
                .spawn(move || ask_on_terminal(&asking, &calls, terminal))
                .map(drop)
                .unwrap_or_else(|e| {
                    output::notice(&format!("cannot start the consent prompt: {e}"));
                });
            output::notice(&format!(
                "calls on \"ask\" are asked on this terminal (for {} s)",
                timeout.as_secs()
            ));
        }
        Err(e) => output::notice(&format!(
            "no terminal to ask on ({e}): calls on \"ask\" are refused"
        )),
    }
    desk
}

/// What the operator reads about one waiting call: the tool, the turn, the params in full
/// (strings as their text, so code reads as code) and their digest. Pass it through the
/// terminal filter.
pub fn describe(call: &PendingConsent) -> String {
    let mut s = format!(
        "{} (capability {}) wants to run, call {}",
        call.tool, call.capability, call.id
    );
    if let Some(turn) = &call.turn {
        s.push_str(&format!(", turn {turn}"));
    }
    if !call.destinations.is_empty() {
        // the question is about these values: say so before the params
        s.push_str(
            "\n  it would reach destinations your words for this turn do not name; the turn has \
             read your files or content from outside, and an address found there may be \
             somebody else's:\n",
        );
        for d in &call.destinations {
            s.push_str(&format!("    {d}\n"));
        }
        s.push_str("  a yes allows exactly these, for the rest of this turn");
    }
    s.push_str(&format!(
        "\n  params, sha256:{} of their canonical JSON:\n",
        call.params_sha256
    ));
    match &call.params {
        Value::Object(map) if !map.is_empty() => {
            for (k, v) in map {
                match v {
                    Value::String(text) if text.contains('\n') => {
                        s.push_str(&format!("    {k}:\n"));
                        for line in text.lines() {
                            s.push_str(&format!("      | {line}\n"));
                        }
                    }
                    Value::String(text) => s.push_str(&format!("    {k}: {text}\n")),
                    other => s.push_str(&format!("    {k}: {other}\n")),
                }
            }
        }
        other => s.push_str(&format!("    {other}\n")),
    }
    s
}

/// The terminal's side of the desk: asks about each call that starts to wait, one at a
/// time, until it is answered or its time is up.
fn ask_on_terminal(desk: &ConsentDesk, calls: &Receiver<PendingCall>, mut tty: output::Tty) {
    for call in calls.iter() {
        if !desk.is_pending(&call.id) {
            continue;
        }
        let wire = call.to_wire(std::time::Instant::now());
        let always = if desk.can_write_rules() {
            "  [a] always (a rule in the policy file)"
        } else {
            ""
        };
        tty.discard_typed_ahead();
        tty.say(&format!(
            "\n\u{2500}\u{2500} seam: consent \u{2500}\u{2500}\n{}  allow? [y] once  [t] for this turn{always}  [n] no  ({} s)\n> ",
            describe(&wire),
            desk.timeout().as_secs()
        ));
        loop {
            let Some(line) = tty.read_line(call.deadline, || desk.is_pending(&call.id)) else {
                if std::time::Instant::now() >= call.deadline {
                    tty.say(&format!(
                        "\nno answer within {} s: {} is refused\n",
                        desk.timeout().as_secs(),
                        call.tool
                    ));
                } else {
                    tty.say("\nanswered elsewhere\n");
                }
                break;
            };
            let reply = match line.trim().to_ascii_lowercase().as_str() {
                "y" | "yes" => ConsentReply::Once,
                "t" | "turn" => ConsentReply::Turn,
                "a" | "always" if desk.can_write_rules() => ConsentReply::Always,
                "n" | "no" => ConsentReply::Deny,
                _ => {
                    tty.say(&format!(
                        "answer y, t,{} or n\n> ",
                        if desk.can_write_rules() { " a" } else { "" }
                    ));
                    continue;
                }
            };
            match desk.answer(&call.id, reply, ConsentBy::Terminal) {
                Ok(()) => {
                    tty.say(match reply {
                        ConsentReply::Once => "allowed, this call\n",
                        ConsentReply::Turn => "allowed, this tool for the rest of the turn\n",
                        ConsentReply::Always => {
                            "allowed from now on ([consent] always in the policy file)\n"
                        }
                        ConsentReply::Deny => "refused\n",
                    });
                    break;
                }
                Err(AnswerError::NotPending(_)) => break,
                Err(e) => tty.say(&format!("{e}\n> ")),
            }
        }
    }
}

/// `seam consent list|approve|deny`.
pub fn run(ctx: &Context, cmd: ConsentCommand) -> anyhow::Result<Exit> {
    let opener = seam_agent::gate_client::read_opener(&ctx.seam_home)
        .context("reading the turn opener (answers for the operator take it)")?;
    let mut client = GateClient::new(GateEndpoint::unix_in(&ctx.seam_home)).with_opener(opener);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .context("starting the client's runtime")?;
    match cmd {
        ConsentCommand::List { json } => {
            let pending = runtime.block_on(client.consents())?;
            if json {
                output::json(&pending);
            } else if pending.is_empty() {
                output::line("no call is waiting for consent");
            } else {
                for p in &pending {
                    output::text_ln(&format!(
                        "{}  waited {} s of {} s",
                        describe(p),
                        p.waited_ms / 1000,
                        p.timeout_ms / 1000
                    ));
                }
            }
            Ok(Exit::Ok)
        }
        ConsentCommand::Approve { id, turn, always } => {
            let reply = match (turn, always) {
                (_, true) => ConsentReply::Always,
                (true, _) => ConsentReply::Turn,
                _ => ConsentReply::Once,
            };
            answer(&runtime, &mut client, &id, reply)
        }
        ConsentCommand::Deny { id } => answer(&runtime, &mut client, &id, ConsentReply::Deny),
    }
}

fn answer(
    runtime: &tokio::runtime::Runtime,
    client: &mut GateClient,
    id: &str,
    reply: ConsentReply,
) -> anyhow::Result<Exit> {
    if id.is_empty() || !id.chars().all(|c| c.is_ascii_alphanumeric() || c == '-') {
        return Err(UsageError(format!(
            "{id:?} is not a call's id: take one from seam consent list"
        ))
        .into());
    }
    runtime.block_on(client.answer_consent(id, reply))?;
    output::line(&format!(
        "call {id}: {}",
        match reply {
            ConsentReply::Once => "allowed",
            ConsentReply::Turn => "allowed, and its tool for the rest of its turn",
            ConsentReply::Always => "allowed, and its tool from now on (the policy file says so)",
            ConsentReply::Deny => "refused",
        }
    ));
    Ok(Exit::Ok)
}

/// One line about a waiting call, for `seam watch`.
pub fn watch_line(p: &PendingConsent) -> String {
    format!(
        "consent waiting {} {} params={} sha256:{} ({} s of {} s): seam consent approve|deny {}",
        p.id,
        p.tool,
        p.params,
        p.params_sha256,
        p.waited_ms / 1000,
        p.timeout_ms / 1000,
        p.id
    )
}

/// The calls waiting at the gate on seam's socket, if one runs and answers the owner.
pub fn pending_at_gate(seam_home: &std::path::Path) -> Vec<PendingConsent> {
    let Ok(opener) = seam_agent::gate_client::read_opener(seam_home) else {
        return Vec::new();
    };
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return Vec::new();
    };
    let mut client = GateClient::new(GateEndpoint::unix_in(seam_home)).with_opener(opener);
    runtime
        .block_on(async {
            tokio::time::timeout(Duration::from_millis(500), client.consents()).await
        })
        .ok()
        .and_then(Result::ok)
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(destinations: Vec<String>) -> PendingConsent {
        PendingConsent {
            id: "inv-1".into(),
            turn: Some("turn-1".into()),
            tool: "bank.send_money".into(),
            capability: "egress".into(),
            params: json!({"recipient": "UK12345678901234567890", "amount": 98.7}),
            params_sha256: "ab".repeat(32),
            destinations,
            waited_ms: 0,
            timeout_ms: 120_000,
        }
    }

    #[test]
    fn a_question_about_destinations_names_each_and_what_a_yes_allows() {
        let text = describe(&call(vec![
            "/recipient = \"UK12345678901234567890\"".into(),
        ]));
        assert!(
            text.contains("destinations your words for this turn do not name"),
            "{text}"
        );
        assert!(
            text.contains("    /recipient = \"UK12345678901234567890\"\n"),
            "{text}"
        );
        assert!(
            text.contains("exactly these, for the rest of this turn"),
            "{text}"
        );
        // the params still follow, in full
        assert!(text.contains("recipient: UK12345678901234567890"), "{text}");
        let plain = describe(&call(Vec::new()));
        assert!(!plain.contains("destinations"), "{plain}");
    }
}
