//! One module per subcommand. Each returns its exit code; errors become exit
//! 1 or 2 in `exit::report`.

mod action;
mod ask;
mod consent;
mod doctor;
mod gate;
mod index;
mod invoke;
mod ledger;
mod mcp;
mod model;
mod note;
mod policy;
mod prompt;
mod queue;
mod scrub;
mod secret;
mod term;
mod tools;
mod watch;

use crate::cli::{Cli, Command};
use crate::context::Context;
use crate::exit::Exit;

pub fn run(cli: Cli) -> anyhow::Result<Exit> {
    match cli.command {
        Command::Term(cmd) => term::run(cmd),
        Command::Scrub { json } => scrub::scrub(json),
        Command::Shapes { json } => scrub::shapes(json),
        Command::Action(cmd) => action::run(cmd),
        Command::Prompt { json } => {
            let ctx = Context::load(&cli.global)?;
            prompt::run(&ctx, json)
        }
        Command::Ask(o) => {
            let ctx = Context::load(&cli.global)?;
            let args = ask::AskArgs {
                task: o.task,
                model_url: o.model_url,
                model: o.model,
                no_constrain: o.no_constrain,
                no_stream: o.no_stream,
                trace: o.trace,
                max_steps: o.max_steps,
                max_seconds: o.max_seconds,
                max_tokens: o.max_tokens,
                gate_url: o.gate_url,
                repo: o.repo,
                attach: o.attach,
                agent_config: o.agent_config,
                json: o.json,
                confine: match (o.require_confinement, o.no_confine) {
                    (true, _) => ask::ConfineMode::Required,
                    (_, true) => ask::ConfineMode::Off,
                    _ => ask::ConfineMode::BestEffort,
                },
                consent_timeout: o.consent_timeout,
            };
            ask::run(&ctx, &cli.global, args)
        }
        Command::Tools { json } => {
            let ctx = Context::load(&cli.global)?;
            tools::run(&ctx, json)
        }
        Command::Invoke {
            tool,
            params,
            turn,
            read_limit,
            gate,
            gate_url,
        } => {
            let ctx = Context::load(&cli.global)?;
            if gate || gate_url.is_some() {
                gate::invoke(&ctx, &tool, &params, turn, gate_url.as_deref())
            } else {
                invoke::run(&ctx, &tool, &params, turn, read_limit)
            }
        }
        Command::Gate {
            listen,
            allow_non_loopback,
            call_timeout,
            max_body,
            read_limit,
            until_stdin_closes,
            consent_timeout,
            consent_tty,
        } => {
            let ctx = Context::load(&cli.global)?;
            gate::serve(
                &ctx,
                gate::GateArgs {
                    listen,
                    allow_non_loopback,
                    call_timeout_secs: call_timeout,
                    max_body_bytes: max_body,
                    read_limit,
                    until_stdin_closes,
                    consent_timeout_secs: consent_timeout,
                    consent_tty,
                },
            )
        }
        Command::InvokeLoop {
            tool,
            params,
            threads,
        } => {
            let ctx = Context::load(&cli.global)?;
            invoke::invoke_loop(&ctx, &tool, &params, threads)
        }
        Command::Index { path, json } => {
            let ctx = Context::load(&cli.global)?;
            index::run(&ctx, &path, json)
        }
        Command::Note(cmd) => {
            let ctx = Context::load(&cli.global)?;
            note::run(&ctx, cmd)
        }
        Command::Queue(cmd) => {
            let ctx = Context::load(&cli.global)?;
            queue::run(&ctx, cmd)
        }
        Command::Consent(cmd) => {
            let ctx = Context::load(&cli.global)?;
            consent::run(&ctx, cmd)
        }
        Command::Watch { plain, once } => {
            let ctx = Context::load(&cli.global)?;
            watch::run(&ctx, plain, once)
        }
        Command::Model(cmd) => model::run(cmd),
        Command::Ledger(cmd) => {
            let ctx = Context::load(&cli.global)?;
            ledger::run(&ctx, cmd)
        }
        Command::OpenTurn { gate_url } => {
            let ctx = Context::load(&cli.global)?;
            ask::open_turn::run(&ctx, gate_url.as_deref())
        }
        Command::AgentAttack(args) => {
            let ctx = Context::load(&cli.global)?;
            ask::attack::run(&ctx, &cli.global, args)
        }
        Command::Doctor { json } => {
            let ctx = Context::load(&cli.global)?;
            doctor::run(&ctx, json)
        }
        Command::Policy(cmd) => {
            let ctx = Context::load(&cli.global)?;
            policy::run(&ctx, cmd)
        }
        Command::Secret(cmd) => {
            let ctx = Context::load(&cli.global)?;
            secret::run(&ctx, cmd)
        }
        Command::Mcp {
            command,
            operator_words,
        } => {
            let ctx = Context::load(&cli.global)?;
            match command {
                None => mcp::serve(&ctx, &operator_words),
                Some(crate::cli::McpCommand::List { json }) => mcp::list(&ctx, json),
                Some(crate::cli::McpCommand::Accept { server, json }) => {
                    mcp::accept(&ctx, &server, json)
                }
            }
        }
    }
}
