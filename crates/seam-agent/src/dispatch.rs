//! Dispatch: one call to the side of the seam that runs it.
//!
//! [`ActionDispatch`] is what the turn loop calls. [`Router`] picks the side
//! from the registry; [`GateDispatch`] sends a governed call to the gate over
//! HTTP and unwraps the envelope (the model sees `output`, never the
//! governance metadata, which stays in the trace); [`LocalDispatch`] runs a
//! local tool in-process on a blocking thread.
//!
//! Taint crosses the seam in one direction: a local tool whose answer carries the owner's
//! data or text a model wrote in an earlier turn (`seam_local::taints_turn`) taints the
//! gate's turn through [`ActionDispatch::taint`] before the model sees the answer; if the
//! gate cannot be told, the answer is withheld.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;
use std::time::{Duration, Instant};

use seam_local::{LocalRefusal, TurnInfo};
use seam_protocol::{Answer, RefusalCode};
use serde_json::{Map, Value};
use tokio::sync::Mutex;

use crate::gate_client::{GateClient, GateClientError};
use crate::registry::{Registry, Side};
use seam_protocol::wire::TurnOpened;

/// What came of one call.
#[derive(Debug, Clone, PartialEq)]
pub struct Outcome {
    pub tool: String,
    pub side: Option<Side>,
    /// The gate's invocation id (governed calls).
    pub invocation_id: Option<String>,
    pub result: CallResult,
    /// The gate says this call tainted the turn.
    pub tainted: bool,
    /// Secret shapes the gate redacted from the output.
    pub scrubbed: Vec<String>,
    pub elapsed: Duration,
}

/// The part the model may see.
#[derive(Debug, Clone, PartialEq)]
pub enum CallResult {
    /// The tool's output (the envelope's `output`, unwrapped).
    Output(Value),
    /// Refused: a code and a short plain sentence.
    Refused { code: RefusalCode, message: String },
}

impl Outcome {
    fn refused(tool: &str, side: Option<Side>, code: RefusalCode, message: String) -> Outcome {
        Outcome {
            tool: tool.to_owned(),
            side,
            invocation_id: None,
            result: CallResult::Refused { code, message },
            tainted: false,
            scrubbed: Vec::new(),
            elapsed: Duration::ZERO,
        }
    }

    /// True when the tool ran and answered.
    pub fn ok(&self) -> bool {
        matches!(self.result, CallResult::Output(_))
    }
}

/// A failure of the machinery, not a refusal: the turn cannot go on.
#[derive(Debug, thiserror::Error)]
pub enum DispatchError {
    #[error(transparent)]
    Gate(#[from] GateClientError),
    #[error("the local tool {tool} stopped abnormally: {reason}")]
    Local { tool: String, reason: String },
}

pub type DispatchFuture<'a> =
    Pin<Box<dyn Future<Output = Result<Outcome, DispatchError>> + Send + 'a>>;

/// Runs one call. The params have been corrected already (see `seam-action`).
pub trait ActionDispatch: Send + Sync {
    fn dispatch<'a>(
        &'a self,
        tool: &'a str,
        params: &'a Map<String, Value>,
        turn: &'a TurnInfo,
    ) -> DispatchFuture<'a>;

    /// Taints the turn where the side that keeps taint can see it (the gate). A side that
    /// keeps none has nothing to do.
    fn taint<'a>(&'a self) -> Pin<Box<dyn Future<Output = Result<(), DispatchError>> + Send + 'a>> {
        Box::pin(async { Ok(()) })
    }
}

/// Governed calls: over HTTP to the gate, in the gate's turn.
#[derive(Debug)]
pub struct GateDispatch {
    client: Mutex<GateClient>,
    turn: TurnOpened,
}

impl GateDispatch {
    /// Calls go to `client` in the gate's turn `turn` (from `POST /v1/turns`: its id and
    /// the token that proves the caller holds it).
    pub fn new(client: GateClient, turn: TurnOpened) -> GateDispatch {
        GateDispatch {
            client: Mutex::new(client),
            turn,
        }
    }

    pub fn turn(&self) -> &str {
        &self.turn.turn
    }

    /// Closes the gate's turn (its taint is forgotten with it).
    pub async fn close(&self) -> Result<(), GateClientError> {
        self.client.lock().await.close_turn(&self.turn).await
    }
}

impl ActionDispatch for GateDispatch {
    fn dispatch<'a>(
        &'a self,
        tool: &'a str,
        params: &'a Map<String, Value>,
        _turn: &'a TurnInfo,
    ) -> DispatchFuture<'a> {
        Box::pin(async move {
            let started = Instant::now();
            let invoked = self
                .client
                .lock()
                .await
                .invoke(tool, Value::Object(params.clone()), Some(&self.turn))
                .await?;
            let elapsed = started.elapsed();
            Ok(match invoked.answer {
                Answer::Envelope(e) => Outcome {
                    tool: e.tool,
                    side: Some(Side::Governed),
                    invocation_id: Some(e.invocation_id),
                    result: CallResult::Output(e.output),
                    tainted: e.tainted,
                    scrubbed: e.scrubbed,
                    elapsed,
                },
                Answer::Refusal(r) => Outcome {
                    tool: r.tool,
                    side: Some(Side::Governed),
                    invocation_id: Some(r.invocation_id),
                    result: CallResult::Refused {
                        code: r.refused.code,
                        message: r.refused.message,
                    },
                    tainted: invoked.turn_tainted,
                    scrubbed: Vec::new(),
                    elapsed,
                },
            })
        })
    }

    fn taint<'a>(&'a self) -> Pin<Box<dyn Future<Output = Result<(), DispatchError>> + Send + 'a>> {
        Box::pin(async move {
            self.client
                .lock()
                .await
                .taint_turn(&self.turn)
                .await
                .map_err(DispatchError::from)
        })
    }
}

/// The local tools as dispatch needs them: a blocking call by name.
pub trait LocalToolbox: Send + Sync + 'static {
    fn call(
        &self,
        turn: &TurnInfo,
        tool: &str,
        params: &Map<String, Value>,
    ) -> Result<Value, LocalRefusal>;

    /// Does an answer of this call carry the owner's data or text a model wrote in an
    /// earlier turn (so it must taint the turn)?
    fn taints(&self, _tool: &str, _params: &Map<String, Value>) -> bool {
        false
    }
}

/// Local calls: the agent's own tools, in-process.
#[derive(Debug)]
pub struct LocalDispatch<T> {
    tools: Arc<T>,
}

impl<T: LocalToolbox> LocalDispatch<T> {
    pub fn new(tools: Arc<T>) -> LocalDispatch<T> {
        LocalDispatch { tools }
    }
}

impl<T: LocalToolbox> ActionDispatch for LocalDispatch<T> {
    fn dispatch<'a>(
        &'a self,
        tool: &'a str,
        params: &'a Map<String, Value>,
        turn: &'a TurnInfo,
    ) -> DispatchFuture<'a> {
        let tools = self.tools.clone();
        let taints = self.tools.taints(tool, params);
        let (name, params, turn) = (tool.to_owned(), params.clone(), turn.clone());
        Box::pin(async move {
            let started = Instant::now();
            let joined = tokio::task::spawn_blocking(move || {
                let r = tools.call(&turn, &name, &params);
                (name, r)
            })
            .await;
            let (name, result) = joined.map_err(|e| DispatchError::Local {
                tool: tool.to_owned(),
                reason: e.to_string(),
            })?;
            let mut outcome = match result {
                Ok(v) => Outcome {
                    tool: name,
                    side: Some(Side::Local),
                    invocation_id: None,
                    result: CallResult::Output(v),
                    tainted: taints,
                    scrubbed: Vec::new(),
                    elapsed: Duration::ZERO,
                },
                Err(r) => Outcome::refused(&name, Some(Side::Local), r.code, r.message),
            };
            outcome.elapsed = started.elapsed();
            Ok(outcome)
        })
    }
}

/// Routes each call to its side; refuses a name that is no tool, with the
/// list of real names.
pub struct Router {
    registry: Arc<Registry>,
    local: Box<dyn ActionDispatch>,
    governed: Box<dyn ActionDispatch>,
}

impl std::fmt::Debug for Router {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Router")
            .field("tools", &self.registry.len())
            .finish_non_exhaustive()
    }
}

impl Router {
    pub fn new(
        registry: Arc<Registry>,
        local: Box<dyn ActionDispatch>,
        governed: Box<dyn ActionDispatch>,
    ) -> Router {
        Router {
            registry,
            local,
            governed,
        }
    }

    pub fn registry(&self) -> &Registry {
        &self.registry
    }
}

impl ActionDispatch for Router {
    fn dispatch<'a>(
        &'a self,
        tool: &'a str,
        params: &'a Map<String, Value>,
        turn: &'a TurnInfo,
    ) -> DispatchFuture<'a> {
        match self.registry.get(tool).map(|t| t.side) {
            Some(Side::Local) => Box::pin(async move {
                let mut outcome = self.local.dispatch(tool, params, turn).await?;
                if outcome.ok() && outcome.tainted {
                    // The gate learns of it before the model sees the answer.
                    if let Err(e) = self.governed.taint().await {
                        outcome = Outcome::refused(
                            tool,
                            Some(Side::Local),
                            RefusalCode::Failed,
                            format!(
                                "the answer carries the owner's data, and the turn could not \
                                 be marked as tainted at the gate ({e}), so it is withheld"
                            ),
                        );
                    }
                }
                Ok(outcome)
            }),
            Some(Side::Governed) => self.governed.dispatch(tool, params, turn),
            None => {
                let message = format!(
                    "there is no tool named {tool:?}; the tools are: {}",
                    self.registry.names().join(", ")
                );
                Box::pin(async move {
                    Ok(Outcome::refused(
                        tool,
                        None,
                        RefusalCode::UnknownTool,
                        message,
                    ))
                })
            }
        }
    }
}

impl LocalToolbox for seam_local::LocalTools {
    fn call(
        &self,
        turn: &TurnInfo,
        tool: &str,
        params: &Map<String, Value>,
    ) -> Result<Value, LocalRefusal> {
        seam_local::LocalTools::call(self, turn, tool, params)
    }

    fn taints(&self, tool: &str, params: &Map<String, Value>) -> bool {
        seam_local::taints_turn(tool, params)
    }
}
