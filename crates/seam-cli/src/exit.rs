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
    crate::output::error(&with_causes(err.as_ref()));
    code
}

/// An error's message followed by each of its causes (`source()`, in turn), once each: the
/// libraries' errors leave their cause out of their own message and hand it on as `source`,
/// so whoever shows one to the operator shows the whole chain this way.
pub fn with_causes(err: &(dyn std::error::Error + 'static)) -> String {
    std::iter::successors(Some(err), |e| e.source())
        .map(|e| e.to_string())
        .collect::<Vec<_>>()
        .join(": ")
}

#[cfg(test)]
mod tests {
    use super::with_causes;

    /// A cause is printed once: the error's own message does not repeat its `source`.
    #[test]
    fn an_error_chain_prints_its_cause_once() {
        let dir = tempfile::tempdir().unwrap();
        let missing = dir.path().join("policy.toml");
        let cause = std::fs::read_to_string(&missing).unwrap_err().to_string();
        let env = seam_policy::PolicyEnv {
            owner_home: dir.path().to_path_buf(),
            seam_home: dir.path().to_path_buf(),
            workspace_root: dir.path().to_path_buf(),
        };
        let err = seam_policy::Policy::load(Some(&missing), env).unwrap_err();
        let shown = with_causes(&err);
        assert_eq!(shown.matches(cause.as_str()).count(), 1, "{shown}");
        assert!(shown.starts_with("cannot read the policy file"), "{shown}");
        let anyhow_err = anyhow::Error::new(err);
        assert_eq!(format!("{anyhow_err:#}"), shown);
    }
}
