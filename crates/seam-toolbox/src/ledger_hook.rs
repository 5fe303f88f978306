//! Step 7 of the pipeline: what the toolbox hands the ledger for every call.

use serde_json::Value;

/// How a call ended, as the ledger records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum CallOutcome {
    /// The tool ran; the SHA-256 of the canonical JSON (`seam_ledger::canonical_json`) of
    /// the scrubbed output as sent.
    Admitted { output_sha256: [u8; 32] },
    /// The call was refused, with the refusal's code.
    Refused { code: seam_protocol::RefusalCode },
}

/// One invocation as the ledger sees it. Params are already scrubbed.
#[derive(Debug, Clone)]
pub struct CallRecord<'a> {
    pub invocation_id: &'a str,
    pub turn: Option<&'a str>,
    pub tool: &'a str,
    pub version: &'a str,
    pub params: &'a Value,
    pub outcome: CallOutcome,
    pub tainted: bool,
    pub scrubbed: &'a [String],
}

/// An operator's answer to a call that waited for consent (or the lack of one), as the
/// ledger records it, before the call's own record. Params are the call's, scrubbed.
#[derive(Debug, Clone)]
pub struct ConsentRecord<'a> {
    pub invocation_id: &'a str,
    pub turn: Option<&'a str>,
    pub tool: &'a str,
    pub version: &'a str,
    pub params: &'a Value,
    pub answer: seam_ledger::ConsentAnswer,
    pub scope: seam_ledger::ConsentScope,
    pub by: seam_ledger::ConsentBy,
    /// `sha256:` of the enforced policy.
    pub policy_digest: &'a str,
}

#[derive(Debug, thiserror::Error)]
#[error("the ledger could not record invocation {invocation_id}: {reason}")]
pub struct LedgerHookError {
    pub invocation_id: String,
    pub reason: String,
}

/// Where the toolbox records each call before it answers. The signed ledger
/// implements this; a call whose record fails is not answered.
pub trait LedgerHook: Send + Sync + std::fmt::Debug {
    fn record(&self, record: &CallRecord<'_>) -> Result<(), LedgerHookError>;
    /// Records an operator's answer; a call whose consent cannot be recorded does not run.
    fn record_consent(&self, record: &ConsentRecord<'_>) -> Result<(), LedgerHookError>;
}

/// A toolbox with no ledger attached records nothing. Used only where no seam
/// home exists to keep one (benchmarks, unit tests of the pipeline itself).
#[derive(Debug, Default, Clone, Copy)]
pub struct NoLedger;

impl LedgerHook for NoLedger {
    fn record(&self, _record: &CallRecord<'_>) -> Result<(), LedgerHookError> {
        Ok(())
    }
    fn record_consent(&self, _record: &ConsentRecord<'_>) -> Result<(), LedgerHookError> {
        Ok(())
    }
}

/// The signed ledger is the gate's ledger: each call becomes one durable,
/// signed, hash-chained record before its answer is returned.
impl LedgerHook for seam_ledger::Ledger {
    fn record(&self, record: &CallRecord<'_>) -> Result<(), LedgerHookError> {
        let (decision, output_sha256) = match &record.outcome {
            CallOutcome::Admitted { output_sha256 } => (
                seam_ledger::Decision::Admitted,
                Some(seam_ledger::Sha256Digest(*output_sha256)),
            ),
            CallOutcome::Refused { code } => (
                seam_ledger::Decision::Refused {
                    code: code.as_str().to_owned(),
                },
                None,
            ),
        };
        self.append(seam_ledger::Entry {
            invocation_id: record.invocation_id.to_owned(),
            turn_id: record.turn.map(str::to_owned),
            tool: record.tool.to_owned(),
            tool_version: record.version.to_owned(),
            params: record.params.clone(),
            decision,
            output_sha256,
            tainted: record.tainted,
            scrubbed: record.scrubbed.to_vec(),
        })
        .map(|_| ())
        .map_err(|e| LedgerHookError {
            invocation_id: record.invocation_id.to_owned(),
            reason: e.to_string(),
        })
    }

    fn record_consent(&self, record: &ConsentRecord<'_>) -> Result<(), LedgerHookError> {
        self.append(seam_ledger::Entry {
            invocation_id: record.invocation_id.to_owned(),
            turn_id: record.turn.map(str::to_owned),
            tool: record.tool.to_owned(),
            tool_version: record.version.to_owned(),
            params: record.params.clone(),
            decision: seam_ledger::Decision::Consent(seam_ledger::Consent {
                answer: record.answer,
                scope: record.scope,
                by: record.by,
                policy_digest: record.policy_digest.to_owned(),
            }),
            output_sha256: None,
            tainted: false,
            scrubbed: Vec::new(),
        })
        .map(|_| ())
        .map_err(|e| LedgerHookError {
            invocation_id: record.invocation_id.to_owned(),
            reason: e.to_string(),
        })
    }
}
