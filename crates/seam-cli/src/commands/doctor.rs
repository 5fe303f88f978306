//! `seam doctor [--json]`: which protections are active on this machine, and what python.run
//! will therefore do. Probes the kernel by trying (namespaces, Landlock, seccomp), finds the
//! real python3, then runs `print(1)` behind every wall as an end-to-end check.
//! Exit 0 when every required wall is up, 1 when one is missing.

use seam_policy::{Capability, Decision};
use seam_sandbox::{Job, Limits, Protection, Sandbox};
use serde::Serialize;

use crate::context::Context;
use crate::exit::Exit;
use crate::output;

#[derive(Debug, Serialize)]
struct Report<'a> {
    protections: &'a [Protection],
    landlock_abi: Option<u32>,
    /// The end-to-end check: `print(1)` behind every wall.
    end_to_end: EndToEnd,
    /// The policy's decision for python.run.
    python_run_decision: Decision,
    python_run_unsandboxed_allowed: bool,
    /// What python.run will do here, in one sentence.
    python_run: String,
    /// The agent's walls (`seam ask`), the policy file, the gate's socket, the ledger.
    agent: super::ask::confine::DoctorReport,
}

#[derive(Debug, Serialize)]
struct EndToEnd {
    ok: bool,
    detail: String,
}

pub fn run(ctx: &Context, as_json: bool) -> anyhow::Result<Exit> {
    let sandbox = Sandbox::shared();
    let protections = sandbox.protections();
    let missing: Vec<&str> = protections.missing().iter().map(|p| p.name).collect();
    let end_to_end = if sandbox.available() {
        let job = Job {
            limits: Limits::with_wall(std::time::Duration::from_secs(10)),
            ..Job::new("print(1)")
        };
        match sandbox.run(&job) {
            Ok(out) if out.exit_code == Some(0) && out.stdout == "1\n" => EndToEnd {
                ok: true,
                detail: format!("print(1) ran behind every wall in {} ms", out.wall_ms),
            },
            Ok(out) => EndToEnd {
                ok: false,
                detail: format!(
                    "print(1) did not print 1 (exit {:?}, signal {:?}): {}",
                    out.exit_code,
                    out.signal,
                    out.stderr.trim()
                ),
            },
            Err(e) => EndToEnd {
                ok: false,
                detail: e.to_string(),
            },
        }
    } else {
        EndToEnd {
            ok: false,
            detail: format!("not tried: missing {}", missing.join(", ")),
        }
    };
    let decision = ctx.policy.decision(Capability::PythonRun);
    let unsandboxed = ctx.policy.python_run_unsandboxed();
    let walls_up = sandbox.available() && end_to_end.ok;
    let python_run = match (decision, walls_up, unsandboxed) {
        (Decision::Deny, _, _) => "refused: the policy denies python.run".to_owned(),
        (_, true, _) => format!(
            "runs sandboxed{}",
            if decision == Decision::Ask {
                " once an operator consents (the policy says \"ask\")"
            } else {
                ""
            }
        ),
        (_, false, true) => format!(
            "runs WITHOUT the sandbox (the policy says \"allow-unsandboxed\"); missing: {}",
            if missing.is_empty() {
                end_to_end.detail.clone()
            } else {
                missing.join(", ")
            }
        ),
        (_, false, false) => format!(
            "refused, naming what is missing: {}",
            if missing.is_empty() {
                end_to_end.detail.clone()
            } else {
                missing.join(", ")
            }
        ),
    };
    let report = Report {
        protections: &protections.list,
        landlock_abi: protections.landlock_abi,
        end_to_end,
        python_run_decision: decision,
        python_run_unsandboxed_allowed: unsandboxed,
        python_run,
        agent: super::ask::confine::doctor_report(
            &ctx.seam_home,
            match ctx.policy.origin() {
                seam_policy::PolicyOrigin::File(p) => Some(p.as_path()),
                _ => None,
            },
            &protections.list,
        ),
    };
    if as_json {
        output::json(&report);
    } else {
        let mut text = String::from("protections for python.run on this machine:\n");
        for p in report.protections {
            let mark = match (p.active, p.required) {
                (true, _) => "active ",
                (false, true) => "MISSING",
                (false, false) => "absent ",
            };
            text.push_str(&format!("  {mark}  {:<24} {}\n", p.name, p.detail));
        }
        text.push_str(&format!(
            "\nend-to-end: {} ({})\n",
            if report.end_to_end.ok { "ok" } else { "FAILED" },
            report.end_to_end.detail
        ));
        text.push_str(&format!(
            "policy: python.run = {}{}\n",
            decision.as_str(),
            if unsandboxed {
                " (allow-unsandboxed)"
            } else {
                ""
            }
        ));
        text.push_str(&format!("python.run here: {}\n", report.python_run));
        text.push_str(&super::ask::confine::doctor_text(&report.agent));
        output::text(&text);
    }
    Ok(if walls_up { Exit::Ok } else { Exit::Internal })
}
