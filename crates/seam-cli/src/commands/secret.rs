//! `seam secret set|list|rm`: the keeper's secrets, set from stdin and never shown; and how
//! the keeper's errors reach the operator.

use std::io::{IsTerminal as _, Read as _};

use anyhow::Context as _;
use seam_gate::OpenError;
use seam_keeper::{Keeper, MAX_VALUE_LEN, SecretValue};

use crate::cli::SecretCommand;
use crate::context::Context;
use crate::exit::{Exit, UsageError};
use crate::output;

pub fn run(ctx: &Context, cmd: SecretCommand) -> anyhow::Result<Exit> {
    match cmd {
        SecretCommand::Set {
            name,
            value_on_command_line,
        } => {
            if !value_on_command_line.is_empty() {
                // The value is not repeated here: it is already in the process list and
                // probably in the shell's history.
                return Err(UsageError(format!(
                    "seam secret set takes the value from stdin, never from the command line \
                     ({} extra argument(s) refused; nothing was stored). A value typed on the \
                     command line may be in your shell's history: if it was a real key, \
                     rotate it. Run `seam secret set {name}` and type or pipe the value",
                    value_on_command_line.len()
                ))
                .into());
            }
            seam_keeper::check_name(&name).map_err(|e| UsageError(e.to_string()))?;
            let value = read_value(&name)?;
            let mut keeper = open(ctx)?;
            let replaced = keeper
                .set(&name, value)
                .map_err(|e| keeper_error(e, "storing the secret"))?;
            output::notice(&format!(
                "{} secret {name:?} in {} (config refers to it as keeper:{name}; a running \
                 gate reads the keeper when it starts)",
                if replaced { "replaced" } else { "stored" },
                keeper.file().display()
            ));
            Ok(Exit::Ok)
        }
        SecretCommand::List { json } => {
            let keeper = open(ctx)?;
            let names: Vec<&str> = keeper.names().collect();
            if json {
                output::json(&names);
            } else if names.is_empty() {
                output::notice(&format!(
                    "the keeper holds no secrets ({}); add one with `seam secret set NAME`",
                    keeper.file().display()
                ));
            } else {
                for name in names {
                    output::line(name);
                }
            }
            Ok(Exit::Ok)
        }
        SecretCommand::Rm { name } => {
            seam_keeper::check_name(&name).map_err(|e| UsageError(e.to_string()))?;
            let mut keeper = open(ctx)?;
            if keeper
                .remove(&name)
                .map_err(|e| keeper_error(e, "removing the secret"))?
            {
                output::notice(&format!("removed secret {name:?}"));
                Ok(Exit::Ok)
            } else {
                Err(UsageError(format!("the keeper holds no secret named {name:?}")).into())
            }
        }
    }
}

/// A gate that could not be opened, for the operator: a bad name or value in the keeper is
/// theirs to fix (exit 2), as when the keeper is opened here.
pub fn gate_open_error(e: OpenError) -> anyhow::Error {
    match e {
        OpenError::Keeper(e) => keeper_error(e, "opening the keeper"),
        other => other.into(),
    }
}

fn open(ctx: &Context) -> anyhow::Result<Keeper> {
    Keeper::open(&ctx.seam_home).map_err(|e| keeper_error(e, "opening the keeper"))
}

/// A bad name or value is the operator's to fix (exit 2); the rest is an error of the keeper.
fn keeper_error(e: seam_keeper::KeeperError, doing: &str) -> anyhow::Error {
    use seam_keeper::KeeperError as K;
    match e {
        K::BadName { .. } | K::BadValue { .. } => UsageError(e.to_string()).into(),
        other => anyhow::Error::new(other).context(doing.to_owned()),
    }
}

/// The value from stdin: one line typed without echo on a terminal, else all of stdin with
/// one trailing newline removed.
fn read_value(name: &str) -> anyhow::Result<SecretValue> {
    let stdin = std::io::stdin();
    let mut text = if stdin.is_terminal() {
        let prompt = format!("value for secret {name:?} (not shown as you type): ");
        read_line_without_echo(&stdin, &prompt)?
    } else {
        let mut buf = String::new();
        stdin
            .lock()
            .take(MAX_VALUE_LEN as u64 + 3)
            .read_to_string(&mut buf)
            .context("reading the value from stdin (it must be UTF-8 text)")?;
        buf
    };
    if text.ends_with('\n') {
        text.pop();
        if text.ends_with('\r') {
            text.pop();
        }
    }
    if text.is_empty() {
        return Err(UsageError(
            "no value was given on stdin; nothing was stored (pipe the value in, or type it \
             at the prompt)"
                .into(),
        )
        .into());
    }
    Ok(SecretValue::new(text))
}

/// Turns echo off, prompts, reads one line from the terminal, and restores the terminal (also
/// when the read fails). The prompt comes only once echo is off, so nothing typed after it
/// is ever echoed.
fn read_line_without_echo(stdin: &std::io::Stdin, prompt: &str) -> anyhow::Result<String> {
    use rustix::termios::{LocalModes, OptionalActions, tcgetattr, tcsetattr};
    let saved = tcgetattr(stdin).context("reading the terminal's settings")?;
    let mut quiet = saved.clone();
    quiet.local_modes.remove(LocalModes::ECHO);
    quiet.local_modes.insert(LocalModes::ECHONL);
    tcsetattr(stdin, OptionalActions::Flush, &quiet).context("turning echo off")?;
    struct Restore<'a> {
        stdin: &'a std::io::Stdin,
        saved: rustix::termios::Termios,
    }
    impl Drop for Restore<'_> {
        fn drop(&mut self) {
            let _ = tcsetattr(self.stdin, OptionalActions::Flush, &self.saved);
        }
    }
    let _restore = Restore { stdin, saved };
    output::stderr_text(prompt);
    let mut line = String::new();
    stdin
        .read_line(&mut line)
        .context("reading the value from the terminal")?;
    Ok(line)
}
