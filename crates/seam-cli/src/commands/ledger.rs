//! `seam ledger pubkey|verify|head|tail|export`.

use std::path::Path;
use std::time::Duration;

use anyhow::Context as _;
use seam_ledger::{AnchorError, LedgerPublicKey, LedgerReader, Record, VerifyError, VerifyReport};

use crate::cli::LedgerCommand;
use crate::context::Context;
use crate::exit::{Exit, UsageError};
use crate::output;

/// How often `tail --follow` looks for new records.
const FOLLOW_POLL: Duration = Duration::from_millis(200);

pub fn run(ctx: &Context, cmd: LedgerCommand) -> anyhow::Result<Exit> {
    match cmd {
        LedgerCommand::Pubkey => {
            let key = seam_ledger::public_key(&ctx.seam_home).with_context(|| {
                format!(
                    "reading the ledger key in {} (it is made when the gate first records a call)",
                    ctx.seam_home.display()
                )
            })?;
            output::line(&key.to_string());
            Ok(Exit::Ok)
        }
        LedgerCommand::Verify { pubkey, against } => {
            verify(ctx, pubkey.as_deref(), against.as_deref())
        }
        LedgerCommand::Head { append } => head(ctx, append.as_deref()),
        LedgerCommand::Tail { lines, follow } => tail(ctx, lines, follow),
        LedgerCommand::Export { json: _ } => {
            let reader = reader(ctx)?;
            for record in reader.records() {
                let record = record.context("reading the ledger")?;
                output::json_line(&record);
            }
            Ok(Exit::Ok)
        }
    }
}

fn reader(ctx: &Context) -> anyhow::Result<LedgerReader> {
    LedgerReader::open(&ctx.seam_home)
        .with_context(|| format!("opening the ledger in {}", ctx.seam_home.display()))
}

fn verify(ctx: &Context, pubkey: Option<&str>, against: Option<&Path>) -> anyhow::Result<Exit> {
    let key = match pubkey {
        None => None,
        Some(text) => Some(parse_pubkey(text)?),
    };
    let result = match against {
        None => seam_ledger::verify(&ctx.seam_home, key.as_ref()).map(|report| (report, None)),
        Some(file) => seam_ledger::verify_against(&ctx.seam_home, key.as_ref(), file)
            .map(|(report, anchor)| (report, Some(anchor))),
    };
    let against_file = |file: &Path| format!("against the anchor file {}", file.display());
    match result {
        Ok((report, anchor)) => {
            let mut text = verified(&report);
            if let Some(anchor) = anchor {
                text.push_str(&format!(
                    "; not behind the anchor in {} (line {}: seq {}, generation {}; the ledger \
                     is at seq {}, generation {})",
                    anchor.path.display(),
                    anchor.line,
                    anchor.anchor.seq(),
                    anchor.anchor.head.generation,
                    report.records,
                    report.signed_head.generation
                ));
            }
            output::line(&text);
            Ok(Exit::Ok)
        }
        Err(VerifyError::Failed(f)) => {
            let context =
                against.map_or(String::new(), |file| format!(" ({})", against_file(file)));
            output::line(&format!(
                "FAILED at seq {}{context}: {}: {}",
                f.seq, f.kind, f.message
            ));
            Ok(Exit::LedgerBad)
        }
        Err(VerifyError::Anchor(e @ AnchorError::Io { .. }))
        | Err(VerifyError::Anchor(e @ AnchorError::TooLarge { .. })) => {
            Err(anyhow::Error::new(e).context("the anchor could not be read"))
        }
        Err(VerifyError::Anchor(e)) => {
            output::line(&format!(
                "FAILED {}: {e}",
                against_file(against.unwrap_or(Path::new("")))
            ));
            Ok(Exit::LedgerBad)
        }
        Err(VerifyError::Ledger(e)) => {
            Err(anyhow::Error::new(e).context("the ledger could not be read"))
        }
    }
}

/// The line for a ledger that verified.
fn verified(report: &VerifyReport) -> String {
    let mut text = format!(
        "ok: {} records verified (hash chain, signatures, signed head at seq {})",
        report.records, report.head.seq
    );
    if report.unsealed > 0 && report.writer_live {
        text.push_str(&format!(
            "; the last {} were committed a moment ago by the running writer and are \
             not sealed yet",
            report.unsealed
        ));
    } else if report.unsealed > 0 {
        text.push_str(&format!(
            "; the last {} were written during an unclean stop, after the head was \
             sealed and within its ceiling: they check out, but a cut after them \
             would not show; the gate's next start seals them",
            report.unsealed
        ));
    }
    text
}

/// `seam ledger head [--append FILE]`: the verified ledger's signed head as one JSON line.
fn head(ctx: &Context, append: Option<&Path>) -> anyhow::Result<Exit> {
    let anchor = match seam_ledger::anchor(&ctx.seam_home, None) {
        Ok(anchor) => anchor,
        Err(VerifyError::Failed(f)) => {
            output::line(&format!(
                "FAILED at seq {}: {}: {}: a ledger that does not verify is not anchored",
                f.seq, f.kind, f.message
            ));
            return Ok(Exit::LedgerBad);
        }
        Err(e) => {
            return Err(anyhow::Error::new(e).context(format!(
                "reading the ledger's signed head in {}",
                ctx.seam_home.display()
            )));
        }
    };
    if let Some(file) = append {
        seam_ledger::append_anchor(file, &anchor)?;
    }
    output::line(&anchor.to_json_line());
    Ok(Exit::Ok)
}

/// `--pubkey` takes the 64 hex digits, or a file holding them.
fn parse_pubkey(text: &str) -> anyhow::Result<LedgerPublicKey> {
    if let Ok(key) = text.parse::<LedgerPublicKey>() {
        return Ok(key);
    }
    let from_file = std::fs::read_to_string(text).map_err(|e| {
        UsageError(format!(
            "--pubkey {text:?} is neither 64 hex digits nor a readable file: {e}"
        ))
    })?;
    from_file
        .parse::<LedgerPublicKey>()
        .map_err(|e| UsageError(format!("--pubkey file {text}: {e}")).into())
}

fn tail(ctx: &Context, lines: usize, follow: bool) -> anyhow::Result<Exit> {
    let reader = reader(ctx)?;
    let mut last = 0;
    for record in reader.tail(lines).context("reading the ledger")? {
        last = record.seq;
        output::line(&summary(&record));
    }
    if !follow {
        return Ok(Exit::Ok);
    }
    loop {
        let new = reader
            .records_after(last, 1000)
            .context("reading the ledger")?;
        if new.is_empty() {
            std::thread::sleep(FOLLOW_POLL);
            continue;
        }
        for record in new {
            last = record.seq;
            output::line(&summary(&record));
        }
    }
}

/// One record on one line: seq, time, tool, decision, turn, taint, scrubbed shapes.
fn summary(r: &Record) -> String {
    let e = &r.entry;
    let decision = e.decision.label();
    let mut s = format!(
        "{:>6}  {}  {} v{}  {}  id={}",
        r.seq, r.time, e.tool, e.tool_version, decision, e.invocation_id
    );
    if let Some(turn) = &e.turn_id {
        s.push_str(&format!("  turn={turn}"));
    }
    if e.tainted {
        s.push_str("  tainted");
    }
    if !e.scrubbed.is_empty() {
        s.push_str(&format!("  scrubbed={}", e.scrubbed.join(",")));
    }
    if let seam_ledger::Decision::Consent(c) = &e.decision {
        s.push_str(&format!(
            "  params_sha256={}  policy={}",
            r.params_sha256, c.policy_digest
        ));
    }
    s.push_str(&format!(
        "  params={}",
        seam_ledger::canonical_json(&e.params)
    ));
    s
}
