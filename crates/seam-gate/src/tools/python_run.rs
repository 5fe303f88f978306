//! `python.run`: Python code the model wrote, run in seam-sandbox's walls.
//!
//! The code runs as `python3 -c CODE` in fresh namespaces with a read-only view of the system
//! and Python directories, a scratch directory that dies with the call, no network, Landlock,
//! seccomp and rlimits (see the `seam_sandbox` crate). The result is
//! `{exit_code, signal, stdout, stderr, stdout_cut, stderr_cut, timed_out, limit_hit,
//! sandboxed, wall_ms}`; the toolbox scrubs it like every result.
//!
//! **Capability** `python.run`. Its default is `ask` (the policy's built-in table): on a machine
//! whose owner said nothing, code the model wrote does not run without someone saying yes,
//! even in a sandbox — an execution cannot be undone, and a demanding owner expects to be
//! asked before the first one. An owner opts in with `"python.run" = "allow"`.
//!
//! **Taint.** A sandboxed run does not taint the turn: the sandbox shows nothing of the
//! owner's files and has no network, so its output is a function of what the turn already
//! held (the code, stdin and files the model wrote) and of public system files — neither the
//! owner's data nor outside content. A turn already tainted stays tainted. It has no egress,
//! so a tainted turn may still run code.
//!
//! **Honest degradation.** Where the machine cannot raise every wall, the call is refused
//! with a message naming what is missing — unless the policy says
//! `"python.run" = "allow-unsandboxed"`. Then the run goes ahead without the walls, its result
//! says `sandboxed: false`, and (decided when the toolbox is built, from the probe) the tool
//! is declared as tainting and as having egress: unsandboxed code can read the owner's files
//! and reach the network, so it is governed like any tool that can.

use std::time::Duration;

use seam_policy::{Capability, Policy};
use seam_protocol::RefusalCode;
use seam_sandbox::{Job, Limits, MAX_CODE_BYTES, Sandbox, SandboxError, ScratchFile};
use serde::Deserialize;
use serde_json::{Value, json};

use crate::toolbox::{GovernedTool, ToolCall, ToolDecl, ToolFailure};

/// Default wall-clock seconds of a run.
pub const DEFAULT_TIMEOUT_S: f64 = 10.0;
/// Longest wall-clock timeout a call may ask for (below the gate's own call timeout).
pub const MAX_TIMEOUT_S: f64 = 20.0;
/// Most bytes of stdin.
const MAX_STDIN: u64 = 1 << 20;

#[derive(Debug)]
pub struct PythonRun {
    decl: ToolDecl,
    /// The owner allowed unsandboxed runs and this machine cannot raise every wall.
    run_unsandboxed: bool,
    /// `None`: the process-wide sandbox, probed on first use.
    sandbox: Option<&'static Sandbox>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    code: String,
    stdin: Option<String>,
    timeout_s: Option<f64>,
    scratch_files: Option<Vec<FileParam>>,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct FileParam {
    name: String,
    text: String,
}

impl PythonRun {
    /// The tool under `policy`, with the process-wide sandbox.
    pub fn new(policy: &Policy) -> Self {
        Self::build(policy, None)
    }

    /// The tool with a given sandbox (tests, or a gate that picked its own interpreter).
    pub fn with_sandbox(policy: &Policy, sandbox: &'static Sandbox) -> Self {
        Self::build(policy, Some(sandbox))
    }

    fn build(policy: &Policy, sandbox: Option<&'static Sandbox>) -> Self {
        // Probe only when the answer changes the declaration: an owner who allowed
        // unsandboxed runs, on a machine without every wall, gets a tool that taints and
        // has egress.
        let run_unsandboxed =
            policy.python_run_unsandboxed() && !sandbox.unwrap_or_else(Sandbox::shared).available();
        PythonRun {
            decl: ToolDecl {
                name: "python.run",
                version: "1",
                description: "Run Python 3 code in a sandbox (no network, no access to the owner's files, a scratch working directory that is removed afterwards) and return its exit code, stdout and stderr.",
                schema: json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["code"],
                    "properties": {
                        "code": {"type": "string", "minLength": 1, "maxLength": MAX_CODE_BYTES, "description": "Python 3 source, run as python3 -c"},
                        "stdin": {"type": "string", "maxLength": MAX_STDIN, "description": "text given to the code on stdin"},
                        "timeout_s": {"type": "number", "exclusiveMinimum": 0, "maximum": MAX_TIMEOUT_S, "description": "wall-clock seconds before the run is killed (default 10)"},
                        "scratch_files": {
                            "type": "array",
                            "maxItems": seam_sandbox::MAX_FILES,
                            "description": "text files put into the working directory first",
                            "items": {
                                "type": "object",
                                "additionalProperties": false,
                                "required": ["name", "text"],
                                "properties": {
                                    "name": {"type": "string", "minLength": 1, "maxLength": seam_sandbox::MAX_FILE_NAME, "description": "relative name inside the working directory, e.g. data.csv or pkg/mod.py"},
                                    "text": {"type": "string"}
                                }
                            }
                        }
                    }
                }),
                capability: Capability::PythonRun,
                reads: false,
                paths: vec![],
                taints: run_unsandboxed,
                egress: run_unsandboxed,
            },
            run_unsandboxed,
            sandbox,
        }
    }

    fn sandbox(&self) -> &'static Sandbox {
        self.sandbox.unwrap_or_else(Sandbox::shared)
    }
}

impl GovernedTool for PythonRun {
    fn decl(&self) -> &ToolDecl {
        &self.decl
    }

    fn run(&self, call: ToolCall) -> Result<Value, ToolFailure> {
        let params: Params = serde_json::from_value(call.params().clone())
            .map_err(|e| ToolFailure::new(RefusalCode::InvalidParams, e.to_string()))?;
        let timeout = params.timeout_s.unwrap_or(DEFAULT_TIMEOUT_S);
        if !(timeout > 0.0 && timeout <= MAX_TIMEOUT_S) {
            return Err(ToolFailure::new(
                RefusalCode::InvalidParams,
                format!("timeout_s must be in (0, {MAX_TIMEOUT_S}]"),
            ));
        }
        let job = Job {
            code: params.code,
            stdin: params.stdin.unwrap_or_default().into_bytes(),
            files: params
                .scratch_files
                .unwrap_or_default()
                .into_iter()
                .map(|f| ScratchFile {
                    name: f.name,
                    text: f.text,
                })
                .collect(),
            limits: Limits::with_wall(Duration::from_secs_f64(timeout)),
        };
        let sandbox = self.sandbox();
        let result = if sandbox.available() {
            sandbox.run(&job)
        } else if self.run_unsandboxed {
            sandbox.run_unsandboxed(&job)
        } else {
            // refuses, naming every missing wall
            sandbox.run(&job)
        };
        match result {
            Ok(out) => {
                let mut value = serde_json::to_value(&out).map_err(|e| {
                    ToolFailure::new(RefusalCode::ToolFailed, format!("python.run: {e}"))
                })?;
                if !out.sandboxed {
                    let missing: Vec<&str> = sandbox
                        .protections()
                        .missing()
                        .iter()
                        .map(|p| p.name)
                        .collect();
                    value["unsandboxed_because"] = json!(format!(
                        "the policy says \"python.run\" = \"allow-unsandboxed\" and this machine \
                         lacks: {}",
                        missing.join(", ")
                    ));
                }
                Ok(value)
            }
            Err(e @ SandboxError::Unavailable { .. }) => Err(ToolFailure::new(
                RefusalCode::ToolFailed,
                format!(
                    "python.run refuses to run: {e}. seam never runs code unsandboxed on its \
                     own; `seam doctor` shows the walls. An owner who accepts the risk can set \
                     [capabilities] \"python.run\" = \"allow-unsandboxed\" in the policy file"
                ),
            )),
            Err(e @ SandboxError::InvalidJob(_)) => Err(ToolFailure::new(
                RefusalCode::InvalidParams,
                format!("python.run: {e}"),
            )),
            Err(e) => Err(ToolFailure::new(
                RefusalCode::ToolFailed,
                format!("python.run: {e}"),
            )),
        }
    }
}
