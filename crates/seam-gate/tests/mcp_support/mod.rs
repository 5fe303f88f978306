//! What the upstream MCP tests share: a ledger hook that records each call's outcome, the
//! check that the official Python MCP SDK is installed, a throwaway owner home, seam home and
//! workspace, the policy they run under, and a call in a turn with its refusal read back.

#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use seam_gate::{CallOutcome, CallRecord, CallRequest, LedgerHook, LedgerHookError, Toolbox};
use seam_policy::{Policy, PolicyEnv};
use seam_protocol::Answer;

/// Records (tool, refusal code, "admitted" or "consent ANSWER") for every call, as the
/// ledger would.
#[derive(Debug, Default)]
pub struct Recorded(pub Mutex<Vec<(String, String)>>);

impl LedgerHook for Recorded {
    fn record(&self, r: &CallRecord<'_>) -> Result<(), LedgerHookError> {
        let outcome = match r.outcome {
            CallOutcome::Admitted { .. } => "admitted".to_owned(),
            CallOutcome::Refused { code } => code.as_str().to_owned(),
        };
        self.0.lock().unwrap().push((r.tool.to_owned(), outcome));
        Ok(())
    }
    fn record_consent(&self, r: &seam_gate::ConsentRecord<'_>) -> Result<(), LedgerHookError> {
        let outcome = format!("consent {}", r.answer.as_str());
        self.0.lock().unwrap().push((r.tool.to_owned(), outcome));
        Ok(())
    }
}

/// Fails the test, naming the install command, when the official Python MCP SDK is missing.
pub fn require_python_mcp() {
    seam_test_support::mcp::require_python_mcp("mcp.server.mcpserver");
}

pub struct Home {
    pub _dir: tempfile::TempDir,
    pub owner: PathBuf,
    pub seam: PathBuf,
    pub ws: PathBuf,
}

/// An owner home, a seam home and a workspace, empty, in one temporary directory.
pub fn empty_home() -> Home {
    let dir = tempfile::tempdir().unwrap();
    let owner = dir.path().join("home");
    let seam = dir.path().join("seam");
    let ws = dir.path().join("ws");
    for d in [&owner, &seam, &ws] {
        std::fs::create_dir_all(d).unwrap();
    }
    Home {
        _dir: dir,
        owner,
        seam,
        ws,
    }
}

/// The policy of `h` with the network capability allowed: an upstream declared `egress =
/// true` answers to it too (default "ask", which refuses a read), so what decides is the
/// taint rule and the tools' classes.
pub fn policy(h: &Home) -> Arc<Policy> {
    let env = PolicyEnv {
        owner_home: h.owner.clone(),
        seam_home: h.seam.clone(),
        workspace_root: h.ws.clone(),
    };
    let text = "[capabilities]\n\"web.search\" = \"allow\"\n";
    Arc::new(Policy::from_toml_str(text, Path::new("policy.toml"), env).unwrap())
}

/// `tool` called with `params` in `turn`.
pub fn call(tb: &Toolbox, tool: &str, params: serde_json::Value, turn: &str) -> Answer {
    tb.call(CallRequest {
        tool: tool.into(),
        params,
        turn: Some(turn.into()),
    })
    .unwrap()
}

pub use seam_test_support::answer::refusal;
