//! Exit codes, and how an error becomes one.

/// The exit codes of every subcommand.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[repr(u8)]
pub enum Exit {
    Ok = 0,
    Internal = 1,
    Usage = 2,
    Refused = 3,
    /// A ledger failed verification.
    LedgerBad = 4,
}

/// Invalid input from the user: exit 2 with this message.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct UsageError(pub String);

/// Refused by policy: exit 3 with this message.
#[derive(Debug, thiserror::Error)]
#[error("{0}")]
pub struct RefusedError(pub String);

/// Prints an error (through the output module) and picks its exit code.
pub fn report(err: &anyhow::Error) -> Exit {
    let code = if err.downcast_ref::<UsageError>().is_some() {
        Exit::Usage
    } else if err.downcast_ref::<RefusedError>().is_some() {
        Exit::Refused
    } else {
        Exit::Internal
    };
    let mut msg = format!("{err}");
    for cause in err.chain().skip(1) {
        msg.push_str(&format!(": {cause}"));
    }
    crate::output::error(&msg);
    code
}
