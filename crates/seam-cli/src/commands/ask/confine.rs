//! The agent process confined: after the gate is found or started (so the gate never inherits
//! these walls) and before the turn's multi-threaded runtime exists (Landlock binds the calling
//! thread and what it starts later), `seam ask` strips credentials from its environment and
//! restricts itself with Landlock:
//!
//! - **read-only**: the system's libraries and data (`/usr` and `/usr/local` but their
//!   `bin`, `sbin`, `games` and `libexec`; `/lib*`; `/nix/store`), a short list of `/etc`
//!   files (the loader's cache, name resolution, TLS roots, git's system config — not
//!   `/etc/passwd`, not `/etc/shadow`), the seam binary, each program the local tools run,
//!   the object directories of the builder's repository (which the builder's staging
//!   repository borrows as alternates) — not its working tree, and nothing else of its
//!   `.git` (no config, hooks, refs or attributes). Attached files are not among them: the
//!   gate reads those for the launcher before the walls go up;
//! - **read-write**: seam's `staging/` (the builder's staging repositories and worktrees,
//!   images, the agent's TMPDIR) and `agent/` (the return queue, the Critic's build records)
//!   — nothing else of seam's home (not `memory/`, the gate's stores; not `keys/`; not the
//!   ledger), nothing of the operator's repository and nothing else of the owner's home;
//! - **execute**: only what the local tools run — `git` and its libexec directory, `dot`,
//!   `rustfmt` (and, when it is a rustup proxy, the toolchains), `ruff` — each resolved on
//!   PATH now, plus the ELF loader. The loader runs any program the process can *read*, so
//!   what bounds the programs code inside the agent can run is the read list: no program
//!   directory is on it. (Executables that live among libraries, under `/usr/lib`, remain
//!   readable, and so runnable through the loader.);
//! - **network** (Landlock ABI 4): no TCP bind, TCP connect only to the model endpoint's port
//!   and the gate's port when the gate is on TCP (the gate's unix socket needs no port);
//! - **scope** (ABI 6): no abstract unix socket outside the agent, and no signal to a process
//!   outside it (the gate child is stopped by closing its stdin);
//! - **seccomp**: the table python.run's sandbox uses (no ptrace, no mounts or namespaces, no
//!   keyring, no io_uring, …), and sockets only of the unix kind or TCP: no UDP, raw,
//!   netlink or packet socket. The model's host is resolved before the walls (DNS needs UDP)
//!   and its address pinned in the model client.
//!
//! Where a protection is unavailable, [`confine`] says so once (a notice) or, with
//! `--require-confinement`, refuses. `--no-confine` skips all of it (debugging only).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use anyhow::Context as _;
use seam_agent::gate_client::GateEndpoint;
use seam_sandbox::agent_wall::{self, AgentWall, Place, PlaceAccess};

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

/// What the walls are made from.
#[derive(Debug, Clone)]
pub struct ConfineInputs<'a> {
    pub seam_home: &'a Path,
    /// The object directories of the builder's repository (its own and its alternates'),
    /// read-only: the staging repository borrows them; nothing else of the operator's
    /// repository is in the walls.
    pub repo_objects: &'a [PathBuf],
    /// The model endpoint's URL.
    pub model_url: Option<&'a str>,
    /// The embedded model's file, read by the engine thread behind the walls.
    pub model_file: Option<&'a Path>,
    pub gate: &'a GateEndpoint,
}

/// What went up, for the caller (and the attack test) to show.
#[derive(Debug, Clone, Default, serde::Serialize)]
pub struct Confinement {
    pub landlock_abi: Option<u32>,
    pub filesystem: bool,
    pub network: bool,
    pub abstract_unix_scoped: bool,
    pub signals_scoped: bool,
    pub seccomp: bool,
    /// Names of the variables removed (never their values).
    pub env_removed: Vec<String>,
    pub connect_ports: Vec<u16>,
    /// Values overwritten with zeros in the initial environment block (the copy the kernel
    /// shows in /proc/self/environ), checked by reading the block back.
    pub initial_env_blanked: usize,
    /// What is missing, in words.
    pub missing: Vec<String>,
}

/// The seam home subdirectories the agent writes: its staging (worktrees, the staging
/// repositories, images, TMPDIR) and its own data (the return queue, its build records).
/// Not `memory/` (the gate's stores: the operator's notes, the codebase index), not `keys/`,
/// not the ledger.
pub const AGENT_DIRS: [&str; 2] = ["staging", "agent"];

/// Programs the local tools run, looked up on PATH.
const PROGRAMS: [&str; 4] = ["git", "dot", "rustfmt", "ruff"];

/// `/etc` files the agent and the programs it runs read.
const ETC_FILES: [&str; 13] = [
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/resolv.conf",
    "/etc/hosts",
    "/etc/nsswitch.conf",
    "/etc/host.conf",
    "/etc/gai.conf",
    "/etc/ssl",
    "/etc/ca-certificates",
    "/etc/pki",
    "/etc/gitconfig",
    "/etc/localtime",
];

/// True for a variable name that looks like it holds a credential or reaches one.
pub fn looks_like_credential(name: &str) -> bool {
    let upper = name.to_ascii_uppercase();
    const WORDS: [&str; 11] = [
        "KEY",
        "TOKEN",
        "SECRET",
        "PASSWORD",
        "PASSWD",
        "PASSPHRASE",
        "CREDENTIAL",
        "COOKIE",
        "SESSION",
        "PRIVATE",
        "AUTH",
    ];
    const PREFIXES: [&str; 20] = [
        "AWS_",
        "AZURE_",
        "ARM_",
        "GOOGLE_",
        "GCLOUD_",
        "GCP_",
        "CLOUDSDK_",
        "DIGITALOCEAN_",
        "HCLOUD_",
        "OS_",
        "ALICLOUD_",
        "ALIBABA_",
        "IBMCLOUD_",
        "OCI_",
        "LINODE_",
        "VAULT_",
        "SSH_",
        "GPG_",
        "GNUPG",
        "SEAM_KEEPER",
    ];
    const NAMES: [&str; 6] = [
        "KUBECONFIG",
        "DOCKER_CONFIG",
        "DOCKER_HOST",
        "DBUS_SESSION_BUS_ADDRESS",
        "PASSWORD_STORE_DIR",
        "NETRC",
    ];
    WORDS.iter().any(|w| upper.contains(w))
        || PREFIXES.iter().any(|p| upper.starts_with(p))
        || NAMES.contains(&upper.as_str())
}

/// The TCP port of an http(s) URL (its explicit port, else 80 or 443).
pub fn url_port(url: &str) -> Option<u16> {
    let (scheme, rest) = url.split_once("://")?;
    let authority = rest.split(['/', '?', '#']).next()?;
    let host_port = authority.rsplit_once('@').map_or(authority, |(_, h)| h);
    let port = match host_port.rsplit_once(':') {
        Some((host, p)) if !host.ends_with('[') && !p.contains(']') => Some(p.parse().ok()?),
        _ => None,
    };
    port.or(match scheme.to_ascii_lowercase().as_str() {
        "http" => Some(80),
        "https" => Some(443),
        _ => None,
    })
}

/// A program's real file, found on PATH.
fn on_path(name: &str) -> Option<PathBuf> {
    let path = std::env::var_os("PATH")?;
    std::env::split_paths(&path)
        .map(|d| d.join(name))
        .find(|p| p.is_file())
        .and_then(|p| p.canonicalize().ok())
}

/// The directories of programs: not readable behind the walls (only the programs the local
/// tools run are, one by one), because a program the agent can read, it can run through
/// the ELF loader (`ld-linux-x86-64.so.2 /usr/bin/python3`) whatever the exec rules say.
const PROGRAM_DIRS: [&str; 4] = ["bin", "sbin", "games", "libexec"];

/// What of the system the agent reads: `/usr` and `/usr/local` but their program
/// directories ([`PROGRAM_DIRS`]), the library directories at the root (on a merged-/usr
/// system links into `/usr`), and `/nix/store`. Not `/bin` or `/sbin`.
fn system_read_places() -> Vec<PathBuf> {
    let mut out = Vec::new();
    let mut below = |dir: &str, skip: &[&str]| {
        let Ok(rd) = std::fs::read_dir(dir) else {
            return;
        };
        for e in rd.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if PROGRAM_DIRS.contains(&name.as_ref()) || skip.contains(&name.as_ref()) {
                continue;
            }
            out.push(e.path());
        }
    };
    below("/usr", &["local"]);
    below("/usr/local", &[]);
    for root in ["/lib", "/lib64", "/lib32", "/libx32", "/nix/store"] {
        out.push(PathBuf::from(root));
    }
    out
}

/// The ELF loaders of this machine (an exec needs the right to execute its interpreter).
fn loaders() -> Vec<PathBuf> {
    let mut dirs = vec![
        PathBuf::from("/lib"),
        PathBuf::from("/lib64"),
        PathBuf::from("/usr/lib"),
        PathBuf::from("/usr/lib64"),
    ];
    if let Ok(rd) = std::fs::read_dir("/usr/lib") {
        dirs.extend(
            rd.flatten()
                .map(|e| e.path())
                .filter(|p| p.to_string_lossy().ends_with("-linux-gnu")),
        );
    }
    let mut found = Vec::new();
    for d in dirs {
        let Ok(rd) = std::fs::read_dir(&d) else {
            continue;
        };
        for e in rd.flatten() {
            let name = e.file_name();
            let name = name.to_string_lossy();
            if (name.starts_with("ld-linux") || name.starts_with("ld-musl"))
                && let Ok(real) = e.path().canonicalize()
                && !found.contains(&real)
            {
                found.push(real);
            }
        }
    }
    found
}

fn git_exec_path(git: &Path) -> Option<PathBuf> {
    let out = std::process::Command::new(git)
        .arg("--exec-path")
        .stderr(std::process::Stdio::null())
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    Some(PathBuf::from(text.trim_end_matches('\n'))).filter(|p| p.is_absolute())
}

/// The byte ranges of the values of `names` in an environment block (`K=V\0K=V\0…`).
fn value_ranges(block: &[u8], names: &[OsString]) -> Vec<std::ops::Range<usize>> {
    use std::os::unix::ffi::OsStrExt as _;
    let mut ranges = Vec::new();
    let mut start = 0;
    for entry in block.split(|b| *b == 0) {
        if let Some(eq) = entry.iter().position(|b| *b == b'=') {
            let name = &entry[..eq];
            if eq + 1 < entry.len() && names.iter().any(|n| n.as_bytes() == name) {
                ranges.push(start + eq + 1..start + entry.len());
            }
        }
        start += entry.len() + 1;
    }
    ranges
}

/// Overwrites the values of `names` in the initial environment block with zeros (through
/// /proc/self/mem: plain file I/O on this process's own memory), then reads the block back
/// and fails if a value is still there. Returns how many values were blanked.
fn blank_initial_environment(names: &[OsString]) -> std::io::Result<usize> {
    use std::os::unix::fs::FileExt as _;
    if names.is_empty() {
        return Ok(0);
    }
    let stat = std::fs::read_to_string("/proc/self/stat")?;
    // Fields after the command name (which may hold spaces) start at field 3; env_start and
    // env_end are fields 50 and 51.
    let after = stat.rsplit_once(')').map_or("", |(_, a)| a);
    let fields: Vec<&str> = after.split_whitespace().collect();
    let field = |n: usize| -> std::io::Result<u64> {
        fields
            .get(n - 3)
            .and_then(|f| f.parse().ok())
            .ok_or_else(|| std::io::Error::other(format!("no field {n} in /proc/self/stat")))
    };
    let (env_start, env_end) = (field(50)?, field(51)?);
    let mem = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .open("/proc/self/mem")?;
    let mut block = vec![0u8; usize::try_from(env_end.saturating_sub(env_start)).unwrap_or(0)];
    mem.read_exact_at(&mut block, env_start)?;
    let ranges = value_ranges(&block, names);
    for r in &ranges {
        mem.write_all_at(&vec![0u8; r.len()], env_start + r.start as u64)?;
    }
    mem.read_exact_at(&mut block, env_start)?;
    if !value_ranges(&block, names).is_empty()
        || ranges
            .iter()
            .any(|r| block[r.clone()].iter().any(|b| *b != 0))
    {
        return Err(std::io::Error::other(
            "a value is still there after blanking",
        ));
    }
    Ok(ranges.len())
}

/// The walls for these inputs (the places must exist before they can be named: the agent's
/// directories in seam's home are created here).
pub fn plan(inputs: &ConfineInputs<'_>) -> anyhow::Result<AgentWall> {
    let place = |path: PathBuf, access| Place { path, access };
    let mut places = Vec::new();
    for sys in system_read_places() {
        places.push(place(sys, PlaceAccess::Read));
    }
    for f in ETC_FILES {
        places.push(place(f.into(), PlaceAccess::Read));
    }
    places.push(place("/dev/null".into(), PlaceAccess::Device));
    for d in ["/dev/zero", "/dev/urandom", "/dev/random"] {
        places.push(place(d.into(), PlaceAccess::Read));
    }
    if let Ok(exe) = std::env::current_exe().and_then(|e| e.canonicalize()) {
        places.push(place(exe, PlaceAccess::Read));
    }
    for dir in AGENT_DIRS {
        let d = inputs.seam_home.join(dir);
        std::fs::create_dir_all(&d)
            .with_context(|| format!("creating the agent's directory {}", d.display()))?;
        places.push(place(d, PlaceAccess::ReadWrite));
    }
    std::fs::create_dir_all(agent_tmp(inputs.seam_home))
        .context("creating the agent's TMPDIR in staging")?;
    // The embedded model's prompt cache, inside `agent/`. Best effort: without it the engine
    // decodes the system prompt each turn and says why in the step's notes.
    let _ = std::fs::create_dir_all(prompt_cache_dir(inputs.seam_home));
    for objects in inputs.repo_objects {
        places.push(place(objects.clone(), PlaceAccess::Read));
    }
    if let Some(m) = inputs.model_file {
        let real = m
            .canonicalize()
            .with_context(|| format!("the model file {}", m.display()))?;
        places.push(place(real, PlaceAccess::Read));
    }
    for name in PROGRAMS {
        let Some(real) = on_path(name) else { continue };
        if name == "git"
            && let Some(exec) = git_exec_path(&real)
        {
            places.push(place(exec, PlaceAccess::ReadExec));
        }
        if real.file_name().is_some_and(|n| n == "rustup") {
            // A rustup proxy runs the toolchain's program: the toolchains, read and run.
            let rustup_home = std::env::var_os("RUSTUP_HOME")
                .map(PathBuf::from)
                .or_else(|| std::env::var_os("HOME").map(|h| PathBuf::from(h).join(".rustup")));
            if let Some(rh) = rustup_home {
                places.push(place(rh.join("toolchains"), PlaceAccess::ReadExec));
                places.push(place(rh.join("settings.toml"), PlaceAccess::Read));
            }
        }
        places.push(place(real, PlaceAccess::ReadExec));
    }
    for l in loaders() {
        places.push(place(l, PlaceAccess::ReadExec));
    }
    let mut connect_ports = Vec::new();
    if let Some(p) = inputs.model_url.and_then(url_port) {
        connect_ports.push(p);
    }
    if let GateEndpoint::Tcp { authority, .. } = inputs.gate
        && let Some(p) = url_port(&format!("http://{authority}"))
        && !connect_ports.contains(&p)
    {
        connect_ports.push(p);
    }
    Ok(AgentWall {
        places,
        connect_ports,
    })
}

/// The agent's TMPDIR (inside its walls).
pub fn agent_tmp(seam_home: &Path) -> PathBuf {
    seam_home.join("staging").join("tmp")
}

/// Where the embedded model keeps its system prompt's KV state between turns (inside its
/// walls: under `agent/`, which the agent reads and writes).
pub fn prompt_cache_dir(seam_home: &Path) -> PathBuf {
    seam_home.join("agent").join("kv")
}

/// Strips credentials from the environment and raises the walls. Must run while the process
/// has one thread. Says once what is missing (or refuses, in [`ConfineMode::Required`]).
pub fn confine(mode: ConfineMode, inputs: &ConfineInputs<'_>) -> anyhow::Result<Confinement> {
    let mut report = Confinement::default();
    if mode == ConfineMode::Off {
        output::notice(
            "the agent runs unconfined (--no-confine): its environment, files and network are \
             those of this shell",
        );
        return Ok(report);
    }
    let removed: Vec<OsString> = std::env::vars_os()
        .map(|(k, _)| k)
        .filter(|k| looks_like_credential(&k.to_string_lossy()))
        .collect();
    agent_wall::remove_env_vars(&removed).context("stripping credentials from the environment")?;
    report.env_removed = removed
        .iter()
        .map(|k| k.to_string_lossy().into_owned())
        .collect();
    // The variables are gone from `environ`, but the block the kernel put on the stack at
    // exec still holds their values (and /proc/self/environ shows it): blank them there too.
    match blank_initial_environment(&removed) {
        Ok(n) => report.initial_env_blanked = n,
        Err(e) => report.missing.push(format!(
            "blanking the credentials in the process's initial environment block ({e})"
        )),
    }
    agent_wall::set_env_var("TMPDIR", agent_tmp(inputs.seam_home).as_os_str())
        .context("pointing TMPDIR into the agent's walls")?;

    let wall = plan(inputs)?;
    report.connect_ports = wall.connect_ports.clone();
    match wall.restrict_self() {
        Ok(applied) => {
            report.landlock_abi = Some(applied.abi);
            report.filesystem = applied.filesystem;
            report.network = applied.network;
            report.abstract_unix_scoped = applied.abstract_unix_scoped;
            report.signals_scoped = applied.signals_scoped;
            report.seccomp = applied.seccomp;
            if !applied.seccomp {
                report
                    .missing
                    .push("the agent's seccomp filter (seccomp is not available here)".into());
            }
            if !applied.network {
                report.missing.push(format!(
                    "network confinement (Landlock ABI {} has no network rules; ABI 4 does)",
                    applied.abi
                ));
            }
        }
        Err(agent_wall::WallError::Unavailable(why)) => {
            report
                .missing
                .push(format!("filesystem and network confinement ({why})"));
        }
        Err(e) => return Err(anyhow::Error::from(e).context("confining the agent")),
    }
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
            "Landlock exec: starts only git, dot, rustfmt, ruff (and the ELF loader); code \
             already running in the agent can run what it can read, which is no program \
             directory"
                .to_owned(),
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
        gate_socket: socket_state(&seam_home.join("gate.sock")),
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_cache_is_made_inside_a_directory_the_agent_writes() {
        let home = tempfile::tempdir().unwrap();
        let gate = GateEndpoint::unix_in(home.path());
        let wall = plan(&ConfineInputs {
            seam_home: home.path(),
            repo_objects: &[],
            model_url: None,
            model_file: None,
            gate: &gate,
        })
        .unwrap();
        let kv = prompt_cache_dir(home.path());
        assert!(kv.is_dir(), "made before the walls go up");
        assert!(
            wall.places
                .iter()
                .any(|p| p.access == PlaceAccess::ReadWrite && kv.starts_with(&p.path)),
            "{kv:?} is not under a read-write place: {:?}",
            wall.places
        );
    }

    #[test]
    fn credential_names_are_recognised() {
        for yes in [
            "OPENAI_API_KEY",
            "GITHUB_TOKEN",
            "AWS_REGION",
            "aws_profile",
            "DB_PASSWORD",
            "SSH_AUTH_SOCK",
            "CLOUDSDK_CONFIG",
            "DBUS_SESSION_BUS_ADDRESS",
            "MY_SECRET",
            "KUBECONFIG",
        ] {
            assert!(looks_like_credential(yes), "{yes}");
        }
        for no in [
            "PATH",
            "HOME",
            "LANG",
            "TERM",
            "SEAM_HOME",
            "TMPDIR",
            "USER",
        ] {
            assert!(!looks_like_credential(no), "{no}");
        }
    }

    #[test]
    fn values_are_found_in_an_environment_block() {
        let block = b"PATH=/bin\0API_TOKEN=abc\0EMPTY_KEY=\0HOME=/h\0";
        let names = [OsString::from("API_TOKEN"), OsString::from("EMPTY_KEY")];
        let r = value_ranges(block, &names);
        assert_eq!(r.len(), 1);
        assert_eq!(&block[r[0].clone()], b"abc");
    }

    #[test]
    fn ports_come_from_urls() {
        assert_eq!(url_port("http://127.0.0.1:8080/v1"), Some(8080));
        assert_eq!(url_port("https://models.example"), Some(443));
        assert_eq!(url_port("http://h"), Some(80));
        assert_eq!(url_port("http://u:p@h:9/x"), Some(9));
        assert_eq!(url_port("http://[::1]:7000/"), Some(7000));
        assert_eq!(url_port("http://[::1]/"), Some(80));
        assert_eq!(url_port("http://h:notaport"), None);
    }
}
