//! The agent's seven local tools, the Critic and the return queue.
//!
//! (The full design note lands with the tools; this first commit publishes the
//! model-facing contract, [`tool_specs`], and the turn types the agent fills.)

mod spec;
mod turn;

pub use spec::{LOCAL_TOOL_VERSION, LOCAL_TOOLS, tool_specs};
pub use turn::{GateCallRecord, LocalRefusal, StepRecord, TurnInfo};
