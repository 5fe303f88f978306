//! `seam ask`'s walls, wired and told: the policy (credentials, the places, the programs, the
//! plan) is `seam-confine`'s; here the operator's `--require-confinement` / `--no-confine`
//! decide what a missing protection means, and what is missing is printed. Also the doctor's
//! section on the agent.

use std::path::{Path, PathBuf};

use seam_sandbox::agent_wall;

pub use seam_confine::{ConfineInputs, Confinement};

use crate::output;

/// How hard `seam ask` insists on its walls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum ConfineMode {
    /// Raise what the kernel has; say once what is missing.
    #[default]
    BestEffort,
    /// Refuse to run the agent without every protection.
    Required,
    /// No walls (`--no-confine`, for debugging).
    Off,
}

/// Strips credentials and raises the walls (`seam_confine::confine`). Must run while the
/// process has one thread. Says once what is missing (or refuses, in
/// [`ConfineMode::Required`]).
pub fn confine(mode: ConfineMode, inputs: &ConfineInputs<'_>) -> anyhow::Result<Confinement> {
    if mode == ConfineMode::Off {
        output::notice(
            "the agent runs unconfined (--no-confine): its environment, files and network are \
             those of this shell",
        );
        return Ok(Confinement::default());
    }
    let report = seam_confine::confine(inputs)?;
    if !report.missing.is_empty() {
        let what = report.missing.join("; ");
        if mode == ConfineMode::Required {
            anyhow::bail!(
                "the agent cannot be confined as required (--require-confinement): missing {what}"
            );
        }
        output::notice(&format!(
            "the agent runs with less confinement than it should: missing {what}"
        ));
    }
    Ok(report)
}

/// What `seam doctor` says about the agent's walls, the gate's socket and the ledger.
#[derive(Debug, serde::Serialize)]
pub struct DoctorReport {
    pub landlock_abi: Option<u32>,
    pub seccomp: bool,
    pub user_namespaces: bool,
    /// Each protection `seam ask` raises for its agent here, with whether it is active.
    pub agent: Vec<(String, bool)>,
    /// The policy file in force (`None`: the built-in defaults).
    pub policy_file: Option<PathBuf>,
    pub gate_socket: String,
    pub ledger: String,
}

/// Builds the doctor's section on the agent (no walls are raised: this only asks).
pub fn doctor_report(
    seam_home: &Path,
    policy_file: Option<&Path>,
    protections: &[seam_sandbox::Protection],
) -> DoctorReport {
    let abi = agent_wall::landlock_abi().ok();
    let active = |prefix: &str| {
        protections
            .iter()
            .any(|p| p.name.starts_with(prefix) && p.active)
    };
    let v = abi.unwrap_or(0);
    let seccomp = active("seccomp");
    let agent = vec![
        ("credentials stripped from the environment".to_owned(), true),
        (
            "Landlock filesystem: reads the system's libraries and data (no program directory), \
             the seam binary, the programs below, and of the builder's repository its working \
             tree and object store (never its .git config, hooks or refs); writes only seam's \
             staging and agent directories (not memory/, keys/, the ledger, nor the repository)"
                .to_owned(),
            abi.is_some(),
        ),
        (
            format!(
                "Landlock exec: starts only {} (and the ELF loader); code already running in \
                 the agent can run what it can read, which is no program directory",
                seam_local::programs().join(", ")
            ),
            abi.is_some(),
        ),
        (
            "Landlock network: no TCP bind, connect only to the model's (and a TCP gate's) port"
                .to_owned(),
            v >= 4,
        ),
        (
            "Landlock scope: no abstract unix socket and no signal outside the agent".to_owned(),
            v >= 6,
        ),
        (
            "seccomp for the agent: the reviewed deny table (no ptrace, mounts, namespaces, \
             keyring, io_uring), sockets only unix or TCP (no UDP, raw, netlink, packet)"
                .to_owned(),
            seccomp,
        ),
        (
            "not walled: TCP to the model's port on any address, and any pathname unix socket \
             the owner can reach (Landlock and seccomp cannot tell them apart)"
                .to_owned(),
            false,
        ),
    ];
    DoctorReport {
        landlock_abi: abi,
        seccomp: active("seccomp"),
        user_namespaces: active("user namespace"),
        agent,
        policy_file: policy_file.map(Path::to_path_buf),
        gate_socket: socket_state(&seam_home::SeamHome::new(seam_home).gate_socket()),
        ledger: ledger_state(seam_home),
    }
}

/// The doctor's section as text.
pub fn doctor_text(r: &DoctorReport) -> String {
    let mut t = format!(
        "\nkernel: Landlock {}, seccomp {}, user namespaces {}\n",
        r.landlock_abi
            .map_or("absent".to_owned(), |v| format!("ABI {v}")),
        if r.seccomp { "yes" } else { "no" },
        if r.user_namespaces { "yes" } else { "no" },
    );
    t.push_str("the agent's process (seam ask):\n");
    for (what, on) in &r.agent {
        t.push_str(&format!(
            "  {}  {what}\n",
            if *on { "active " } else { "absent " }
        ));
    }
    t.push_str(&format!(
        "policy: {}\n",
        r.policy_file
            .as_ref()
            .map_or("the built-in defaults (no file)".to_owned(), |p| {
                p.display().to_string()
            })
    ));
    t.push_str(&format!("gate socket: {}\n", r.gate_socket));
    t.push_str(&format!("ledger: {}\n", r.ledger));
    t
}

fn socket_state(path: &Path) -> String {
    use std::os::unix::fs::{FileTypeExt as _, MetadataExt as _};
    match std::fs::symlink_metadata(path) {
        Err(_) => format!(
            "{}: none (no gate is running for this home)",
            path.display()
        ),
        Ok(m) if !m.file_type().is_socket() => {
            format!("{}: NOT a socket (something else is there)", path.display())
        }
        Ok(m) => {
            let mode = m.mode() & 0o777;
            format!(
                "{}: a socket, mode {mode:o}, owner uid {}{}",
                path.display(),
                m.uid(),
                if mode & 0o077 == 0 {
                    " (owner only)"
                } else {
                    " (OPEN TO OTHERS: anyone who can reach it can call the gate)"
                }
            )
        }
    }
}

fn ledger_state(seam_home: &Path) -> String {
    let paths = seam_ledger::LedgerPaths::new(seam_home);
    if !paths.db_file.exists() {
        return "none yet (made by the gate's first call)".into();
    }
    match seam_ledger::verify(seam_home, None) {
        Ok(r) => format!(
            "verified: {} records, signed head at record {}",
            r.records, r.head.seq
        ),
        Err(e) => format!("DOES NOT VERIFY: {e}"),
    }
}
