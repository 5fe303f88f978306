//! `facts.get`: one fact about the machine, by enumerated name — a name, never a path.
//!
//! The schema's `fact` is an `enum`, so the toolbox refuses anything else before the tool runs.
//! Each fact is read from a fixed source chosen here (the kernel's `/proc/sys/kernel`,
//! `/proc/meminfo`, `/proc/uptime`, `/proc/loadavg`, `/etc/os-release`, `/etc/timezone`, the
//! `/etc/localtime` link), never from a name the caller gives, so no caller can turn this tool
//! into a file reader. The policy's digest and the workspace root are taken from the policy the
//! toolbox enforces, when the tool is built. It reads no owner's data and does not taint.

use std::time::{SystemTime, UNIX_EPOCH};

use seam_policy::{Capability, Policy};
use seam_protocol::RefusalCode;
use serde::Deserialize;
use serde_json::{Value, json};

use seam_toolbox::{GovernedTool, ToolCall, ToolDecl, ToolFailure};

/// The facts every answer carries beside the one asked for, under `also`: a
/// model that needs two of them (a bug report's architecture and kernel)
/// asked for one at a time, down the list, until its steps ran out.
pub const IDENTITY: &[&str] = &["os", "kernel", "arch", "hostname"];

/// Every fact, in the order the schema lists them.
pub const FACTS: &[(&str, &str)] = &[
    ("os", "the operating system's name and version"),
    ("kernel", "the kernel's name and release"),
    ("arch", "the CPU architecture"),
    ("hostname", "the machine's host name"),
    ("time", "the current time, UTC, RFC 3339"),
    ("timezone", "the machine's time zone (IANA name)"),
    ("seam_version", "the version of seam"),
    (
        "policy_digest",
        "SHA-256 of the policy the gate enforces (as `seam policy show --json` prints it)",
    ),
    (
        "workspace_root",
        "the directory relative paths are relative to",
    ),
    ("cpu_count", "the CPUs this process may use"),
    ("memory_total", "total memory, in bytes"),
    ("uptime", "seconds since the machine booted"),
    ("load_average", "the 1, 5 and 15 minute load averages"),
];

#[derive(Debug)]
pub struct FactsGet {
    decl: ToolDecl,
    policy_digest: String,
    workspace_root: String,
}

#[derive(Debug, Deserialize)]
#[serde(deny_unknown_fields)]
struct Params {
    fact: String,
}

impl FactsGet {
    pub fn new(policy: &Policy) -> Self {
        let policy_digest = crate::policy_digest(policy);
        let names: Vec<&str> = FACTS.iter().map(|(n, _)| *n).collect();
        let listing = FACTS
            .iter()
            .map(|(n, d)| format!("{n}: {d}"))
            .collect::<Vec<_>>()
            .join("; ");
        FactsGet {
            decl: ToolDecl {
                name: "facts.get",
                version: "1",
                description: "Get one fact about the machine by name (os, kernel, arch, hostname, time, timezone, …): returns {fact, value}, and the os, kernel, arch and hostname beside it (also).",
                schema: json!({
                    "type": "object",
                    "additionalProperties": false,
                    "required": ["fact"],
                    "properties": {
                        "fact": {"type": "string", "enum": names, "description": format!("the fact's name (a name, never a path): {listing}")}
                    }
                }),
                capability: Capability::Facts,
                reads: true,
                paths: vec![],
                taints: false,
                egress: false,
                destinations: Vec::new(),
                none_named: crate::NoneNamed::Unknown,
            },
            policy_digest,
            workspace_root: policy.env().workspace_root.display().to_string(),
        }
    }
}

impl GovernedTool for FactsGet {
    fn decl(&self) -> &ToolDecl {
        &self.decl
    }

    fn run(&self, call: ToolCall) -> Result<Value, ToolFailure> {
        let params: Params = serde_json::from_value(call.params().clone())
            .map_err(|e| ToolFailure::new(RefusalCode::InvalidParams, e.to_string()))?;
        let fact = params.fact.as_str();
        let (value, unit) = self.read(fact)?;
        let mut out = json!({"fact": fact, "value": value});
        if let Some(unit) = unit {
            out["unit"] = json!(unit);
        }
        let also: serde_json::Map<String, Value> = IDENTITY
            .iter()
            .filter(|n| **n != fact)
            .filter_map(|n| Some(((*n).to_owned(), self.read(n).ok()?.0)))
            .collect();
        out["also"] = Value::Object(also);
        Ok(out)
    }
}

impl FactsGet {
    /// One fact's value, and its unit if it has one.
    fn read(&self, fact: &str) -> Result<(Value, Option<&'static str>), ToolFailure> {
        Ok(match fact {
            "os" => (json!(os_name()), None),
            "kernel" => (json!(kernel()?), None),
            "arch" => (json!(std::env::consts::ARCH), None),
            "hostname" => (json!(hostname()?), None),
            "time" => {
                let now = SystemTime::now()
                    .duration_since(UNIX_EPOCH)
                    .map_err(|_| unreadable("time", "the clock is before 1970"))?;
                {
                    // seconds past i64::MAX are 292 billion years away
                    let secs = i64::try_from(now.as_secs()).unwrap_or(i64::MAX);
                    (json!(seam_ledger::rfc3339_seconds(secs)), None)
                }
            }
            "timezone" => (json!(timezone()), None),
            "seam_version" => (json!(env!("CARGO_PKG_VERSION")), None),
            "policy_digest" => (json!(self.policy_digest), None),
            "workspace_root" => (json!(self.workspace_root), None),
            "cpu_count" => (
                json!(std::thread::available_parallelism().map_or(1, |n| n.get())),
                None,
            ),
            "memory_total" => (json!(memory_total()?), Some("bytes")),
            "uptime" => (json!(uptime()?), Some("seconds")),
            "load_average" => (json!(load_average()?), None),
            other => {
                // The schema's enum keeps this from happening; say so if it ever does.
                return Err(ToolFailure::new(
                    RefusalCode::InvalidParams,
                    format!("{other:?} is not a fact facts.get knows"),
                ));
            }
        })
    }
}

fn unreadable(fact: &str, why: impl std::fmt::Display) -> ToolFailure {
    ToolFailure::new(
        RefusalCode::ToolFailed,
        format!("the fact {fact:?} cannot be read on this machine: {why}"),
    )
}

fn read_trimmed(path: &str, fact: &str) -> Result<String, ToolFailure> {
    std::fs::read_to_string(path)
        .map(|s| s.trim().to_owned())
        .map_err(|e| unreadable(fact, format!("{path}: {e}")))
}

fn os_name() -> String {
    for path in ["/etc/os-release", "/usr/lib/os-release"] {
        if let Ok(text) = std::fs::read_to_string(path) {
            let field = |key: &str| {
                text.lines()
                    .find_map(|l| l.strip_prefix(key)?.strip_prefix('='))
                    .map(|v| v.trim().trim_matches(['"', '\'']).to_owned())
                    .filter(|v| !v.is_empty())
            };
            if let Some(name) = field("PRETTY_NAME").or_else(|| field("NAME")) {
                return name;
            }
        }
    }
    std::env::consts::OS.to_owned()
}

fn kernel() -> Result<String, ToolFailure> {
    let ostype = read_trimmed("/proc/sys/kernel/ostype", "kernel")?;
    let release = read_trimmed("/proc/sys/kernel/osrelease", "kernel")?;
    Ok(format!("{ostype} {release}"))
}

fn hostname() -> Result<String, ToolFailure> {
    read_trimmed("/proc/sys/kernel/hostname", "hostname")
        .or_else(|_| read_trimmed("/etc/hostname", "hostname"))
}

/// `TZ`, else `/etc/timezone`, else the zone `/etc/localtime` links to, else "UTC" when there
/// is no `/etc/localtime` (the C library's default).
fn timezone() -> String {
    if let Ok(tz) = std::env::var("TZ") {
        let tz = tz.trim_start_matches(':').trim();
        if !tz.is_empty() {
            return tz.to_owned();
        }
    }
    if let Ok(tz) = std::fs::read_to_string("/etc/timezone") {
        let tz = tz.trim();
        if !tz.is_empty() {
            return tz.to_owned();
        }
    }
    match std::fs::read_link("/etc/localtime") {
        Ok(target) => {
            let t = target.to_string_lossy();
            match t.split_once("zoneinfo/") {
                Some((_, zone)) => zone.to_owned(),
                None => "unknown (/etc/localtime is not a zoneinfo link)".to_owned(),
            }
        }
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => "UTC".to_owned(),
        Err(_) => "unknown (/etc/localtime is not a link to a named zone)".to_owned(),
    }
}

fn memory_total() -> Result<u64, ToolFailure> {
    let text = read_trimmed("/proc/meminfo", "memory_total")?;
    text.lines()
        .find_map(|l| l.strip_prefix("MemTotal:"))
        .and_then(|v| v.trim().strip_suffix("kB"))
        .and_then(|v| v.trim().parse::<u64>().ok())
        .map(|kib| kib * 1024)
        .ok_or_else(|| unreadable("memory_total", "/proc/meminfo has no MemTotal line"))
}

fn uptime() -> Result<u64, ToolFailure> {
    let text = read_trimmed("/proc/uptime", "uptime")?;
    text.split_whitespace()
        .next()
        .and_then(|v| v.parse::<f64>().ok())
        .map(|s| s as u64)
        .ok_or_else(|| unreadable("uptime", "/proc/uptime is not in the expected form"))
}

fn load_average() -> Result<Vec<f64>, ToolFailure> {
    let text = read_trimmed("/proc/loadavg", "load_average")?;
    let loads: Vec<f64> = text
        .split_whitespace()
        .take(3)
        .filter_map(|v| v.parse().ok())
        .collect();
    if loads.len() == 3 {
        Ok(loads)
    } else {
        Err(unreadable(
            "load_average",
            "/proc/loadavg is not in the expected form",
        ))
    }
}
