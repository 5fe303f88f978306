//! `seam mcp`: the governed tools as an MCP server on stdin/stdout; `seam mcp list`: the
//! upstream MCP servers the gate governs and the state of each tool; `seam mcp accept
//! SERVER`: accept an upstream's tool definitions as they are now.

use std::sync::Arc;

use anyhow::Context as _;
use seam_gate::ToolboxConfig;
use seam_gate::mcp::{ToolState, UpstreamError, UpstreamReport};
use seam_keeper::Keeper;
use serde::Serialize;

use crate::context::Context;
use crate::exit::{Exit, UsageError};
use crate::output;

/// Says on stderr what became of each upstream MCP server a gate was opened with: what was
/// withheld, refused until accepted, or could not start.
pub fn tell_upstreams(reports: &[UpstreamReport]) {
    for report in reports {
        for line in report_notices(report) {
            output::notice(&line);
        }
    }
}

/// The lines an operator should see about one upstream (nothing when all is well).
fn report_notices(report: &UpstreamReport) -> Vec<String> {
    let server = &report.server;
    let mut out = Vec::new();
    if let Err(why) = &report.started {
        out.push(format!(
            "upstream MCP server {server:?} is not available: {why}"
        ));
        return out;
    }
    if report.first_sight {
        out.push(format!(
            "upstream MCP server {server:?} seen for the first time: its {} tool definitions \
             are fingerprinted and accepted as they are now",
            report.tools.len()
        ));
    }
    for t in &report.tools {
        match &t.state {
            ToolState::Governed => {}
            ToolState::Changed(changes) => out.push(format!(
                "{} changed since it was accepted ({}): refused until `seam mcp accept {server}`",
                t.name,
                changes.join(", ")
            )),
            ToolState::New => out.push(format!(
                "{} is new since {server:?} was accepted: refused until `seam mcp accept {server}`",
                t.name
            )),
            ToolState::Withheld(why) => out.push(format!("{} is withheld: {why}", t.name)),
        }
    }
    out.extend(report.notes.iter().cloned());
    out
}

/// `seam mcp`: serves the toolbox (built-in and upstream tools) over MCP on stdio.
pub fn serve(ctx: &Context, operator_words: &[String]) -> anyhow::Result<Exit> {
    let toolbox = Arc::new(super::invoke::toolbox(
        ctx,
        ToolboxConfig::default().files_read_max_bytes,
    )?);
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .thread_name("seam-mcp")
        .build()
        .context("starting the MCP server's runtime")?;
    let served = runtime.block_on(seam_gate::mcp::serve_stdio(toolbox.clone(), operator_words));
    runtime.shutdown_timeout(std::time::Duration::from_secs(1));
    served.context("serving MCP on stdio")?;
    Ok(Exit::Ok)
}

#[derive(Debug, Serialize)]
struct ToolLine<'a> {
    name: &'a str,
    state: &'static str,
    #[serde(skip_serializing_if = "Option::is_none")]
    detail: Option<String>,
    /// A governed tool's class: what it does and what a call decides.
    #[serde(skip_serializing_if = "Option::is_none")]
    class: Option<ClassLine>,
}

#[derive(Debug, Serialize)]
struct ClassLine {
    effects: Vec<&'static str>,
    decision: &'static str,
    /// "config" (its `effects` entry) or "server" (the server's class, stricter by its
    /// annotations).
    from: &'static str,
    /// Its destination places, as the config declares them (empty: none declared).
    #[serde(skip_serializing_if = "Vec::is_empty")]
    destinations: Vec<String>,
    /// What a call naming none of them reaches ("unknown", "no-one-new").
    none_named: &'static str,
}

fn class_line(t: &seam_gate::mcp::ToolReport, c: &seam_gate::mcp::ToolClass) -> ClassLine {
    ClassLine {
        destinations: t.destinations.clone(),
        none_named: t.none_named.as_str(),
        effects: c.effects.iter().map(|e| e.as_str()).collect(),
        decision: c.decision.as_str(),
        from: match c.source {
            seam_gate::mcp::ClassSource::Config => "config",
            seam_gate::mcp::ClassSource::ServerAndHints => "server",
        },
    }
}

#[derive(Debug, Serialize)]
struct ServerLine<'a> {
    server: &'a str,
    started: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    error: Option<&'a str>,
    first_sight: bool,
    tools: Vec<ToolLine<'a>>,
    notes: &'a [String],
}

fn server_line(r: &UpstreamReport) -> ServerLine<'_> {
    ServerLine {
        server: &r.server,
        started: r.started.is_ok(),
        error: r.started.as_ref().err().map(String::as_str),
        first_sight: r.first_sight,
        tools: r
            .tools
            .iter()
            .map(|t| {
                let (state, detail) = match &t.state {
                    ToolState::Governed => ("governed", None),
                    ToolState::Changed(c) => ("changed", Some(c.join(", "))),
                    ToolState::New => ("new", None),
                    ToolState::Withheld(why) => ("withheld", Some(why.clone())),
                };
                ToolLine {
                    name: &t.name,
                    state,
                    detail,
                    class: t.class.as_ref().map(|c| class_line(t, c)),
                }
            })
            .collect(),
        notes: &r.notes,
    }
}

fn print_reports(reports: &[UpstreamReport], as_json: bool) {
    let lines: Vec<ServerLine<'_>> = reports.iter().map(server_line).collect();
    if as_json {
        output::json(&lines);
        return;
    }
    // Every piece an upstream (or its failure) wrote is shown on one line: a tool name with a
    // newline in it must not forge a line of this list.
    let one = |t: &str| seam_term::on_one_line(t.as_bytes());
    let mut text = String::new();
    for s in &lines {
        match s.error {
            Some(e) => text.push_str(&format!("{}  not available: {}\n", s.server, one(e))),
            None => text.push_str(&format!("{}  {} tools\n", s.server, s.tools.len())),
        }
        for t in &s.tools {
            match (&t.detail, &t.class) {
                (Some(d), _) => {
                    text.push_str(&format!("  {}  {}: {}\n", one(t.name), t.state, one(d)))
                }
                (None, Some(c)) => {
                    let effects = if c.effects.is_empty() {
                        "no effect".to_owned()
                    } else {
                        c.effects.join(", ")
                    };
                    let from = if c.from == "config" {
                        "the config"
                    } else {
                        "the server's class"
                    };
                    let destinations = match (c.destinations.is_empty(), c.none_named) {
                        (true, _) => String::new(),
                        (false, "no-one-new") => format!(
                            "; destinations: {}, a call naming none reaches no one new",
                            c.destinations.join(", ")
                        ),
                        (false, _) => format!("; destinations: {}", c.destinations.join(", ")),
                    };
                    text.push_str(&format!(
                        "  {}  {} ({effects}; {}; from {from}{})\n",
                        one(t.name),
                        t.state,
                        c.decision,
                        one(&destinations)
                    ))
                }
                (None, None) => text.push_str(&format!("  {}  {}\n", one(t.name), t.state)),
            }
        }
        for n in s.notes {
            text.push_str(&format!("  note: {}\n", one(n)));
        }
    }
    if lines.is_empty() {
        text.push_str("no upstream MCP servers are configured ([[mcp.upstream]] in the config)\n");
    }
    output::text(&text);
}

/// `seam mcp list`: starts each upstream and says what became of each of its tools.
pub fn list(ctx: &Context, as_json: bool) -> anyhow::Result<Exit> {
    let keeper = Keeper::open(&ctx.seam_home).context("opening the keeper")?;
    let started = seam_gate::mcp::start_upstreams(&ctx.config.mcp, &ctx.seam_home, &keeper);
    print_reports(&started.reports, as_json);
    Ok(Exit::Ok)
}

/// `seam mcp accept SERVER`: the server's definitions as they are now become the accepted ones.
pub fn accept(ctx: &Context, server: &str, as_json: bool) -> anyhow::Result<Exit> {
    let keeper = Keeper::open(&ctx.seam_home).context("opening the keeper")?;
    ctx.ensure_home()?;
    let report =
        match seam_gate::mcp::accept_upstream(&ctx.config.mcp, server, &ctx.seam_home, &keeper) {
            Ok(r) => r,
            Err(e @ UpstreamError::UnknownServer { .. }) => {
                return Err(UsageError(e.to_string()).into());
            }
            Err(e) => return Err(e.into()),
        };
    if as_json {
        output::json(&server_line(&report));
        return Ok(Exit::Ok);
    }
    let mut text = String::new();
    let mut changed = 0;
    for t in &report.tools {
        match &t.state {
            ToolState::Changed(c) => {
                changed += 1;
                text.push_str(&format!(
                    "accepted {} (changed: {})\n",
                    seam_term::on_one_line(t.name.as_bytes()),
                    c.join(", ")
                ));
            }
            ToolState::New => {
                changed += 1;
                text.push_str(&format!(
                    "accepted {} (new)\n",
                    seam_term::on_one_line(t.name.as_bytes())
                ));
            }
            _ => {}
        }
    }
    text.push_str(&format!(
        "{server}: {} tool definitions accepted{}\n",
        report.tools.len(),
        if changed == 0 && !report.first_sight {
            " (none had changed)"
        } else {
            ""
        }
    ));
    output::text(&text);
    Ok(Exit::Ok)
}
