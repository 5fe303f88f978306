//! The JSON bodies of the gate's `/v1` besides the envelope and the refusal (those are
//! in the crate root). Both the gate and its clients use these; they are stable.

use serde::{Deserialize, Serialize};
use serde_json::Value;

/// `POST /v1/invoke`: one call. Unknown fields are refused (400).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct InvokeRequest {
    pub tool: String,
    pub params: Value,
    /// A turn opened with `POST /v1/turns`. Without one, a client holding the turn
    /// opener gets a turn for this call alone (closed after it); any other client is
    /// refused (see the gate's service doc).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<String>,
    /// The turn's token, from [`TurnOpened`]: the id names the turn, the token proves the
    /// caller holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub token: Option<String>,
}

/// `POST /v1/turns` body (optional: an empty body opens a turn with no operator's words).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OpenTurnRequest {
    /// The operator's words for the turn (the task; the text of attached files): in a tainted
    /// turn, an egress call may still reach a destination they name. Only a client holding the
    /// turn opener opens a turn, so only the launcher, never the agent, says them.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub operator_words: Vec<String>,
}

/// `POST /v1/turns/{id}/operator-words` body (with the turn opener and the turn's token):
/// more of the operator's words for an open turn (an attached file read after it opened).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct OperatorWordsRequest {
    pub text: Vec<String>,
}

/// `POST /v1/turns` → 201 with this body: the turn's id (public: the ledger shows it) and
/// its token (secret: only the opener gets it). `Debug` does not show the token.
#[derive(Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnOpened {
    pub turn: String,
    pub token: String,
}

impl std::fmt::Debug for TurnOpened {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("TurnOpened")
            .field("turn", &self.turn)
            .field("token", &"…")
            .finish()
    }
}

/// `GET /v1/turns/{id}` → 200 with this body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnState {
    pub turn: String,
    /// As the gate recorded it; the caller cannot clear it.
    pub tainted: bool,
}

/// `GET /v1/health` → 200 with this body.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Health {
    /// `"ok"`, or `"stopping"` once shutdown has begun.
    pub status: String,
    /// The gate's version (the seam-gate crate's).
    pub version: String,
    /// How many governed tools it serves.
    pub tools: usize,
    /// Calls running right now (including any the gate gave up waiting for).
    pub in_flight: u64,
}

/// Every answer that is neither an envelope nor a refusal (401, 404 on a
/// path, 400 on a body that is not an invoke request, 413, 500): no call was
/// governed, so there is no invocation id.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ErrorBody {
    pub error: String,
}

/// Request header: the turn opener (the secret in seam's home at `keys/turn-opener`),
/// presented to open a turn or to invoke without one. The agent never holds it.
pub const TURN_OPENER_HEADER: &str = "seam-turn-opener";
/// Request header: a turn's token, presented to `GET`, `DELETE` or taint
/// (`POST /v1/turns/{id}/taint`) that turn.
pub const TURN_TOKEN_HEADER: &str = "seam-turn-token";

/// Response header on every `/v1/invoke` answer: the turn the call ran in
/// (the one named, or the one-call turn the gate opened).
pub const TURN_HEADER: &str = "seam-turn";
/// Response header on every `/v1/invoke` answer: `true` when that turn is
/// tainted after this call, else `false`.
pub const TURN_TAINTED_HEADER: &str = "seam-turn-tainted";

/// `GET /v1/consents` (with the turn opener, on the owner-only socket) → 200 with a list of
/// these: the calls waiting for the operator, oldest first.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct PendingConsent {
    /// The call's invocation id: what `POST /v1/consents/{id}` names.
    pub id: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<String>,
    pub tool: String,
    /// The policy capability that said `ask`.
    pub capability: String,
    /// The params, scrubbed, in full (pass them through the terminal filter to show them).
    pub params: Value,
    /// SHA-256 (hex) of the canonical JSON of `params`: the digest the consent covers and
    /// the ledger records.
    pub params_sha256: String,
    /// The destinations this call would reach that nothing endorses for its tainted turn
    /// (each as `/PLACE = "VALUE"`); empty when the call asks only for its capability. A yes
    /// endorses exactly these values for the rest of the turn.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub destinations: Vec<String>,
    /// How long it has waited, and how long it will (then it is refused).
    pub waited_ms: u64,
    pub timeout_ms: u64,
}

/// `POST /v1/consents/{id}` body: the operator's answer to one pending call.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ConsentReply {
    /// Yes, this call only.
    Once,
    /// Yes, and the same tool for the rest of this turn.
    Turn,
    /// Yes, and the tool from now on: a rule in the policy file (`[consent] always`).
    Always,
    /// No.
    Deny,
}

/// The body of `POST /v1/consents/{id}`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ConsentAnswerRequest {
    pub answer: ConsentReply,
}
