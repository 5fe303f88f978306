//! The agent's confinement: what the `seam ask` agent process may read, write, run and connect
//! to, which of its environment variables are credentials, and the wall plan ([`plan`], data a
//! test can read) raised with seam-sandbox's [`agent_wall`]. `seam ask` calls [`confine`] after
//! the gate is found or started (so the gate never inherits these walls) and before the turn's
//! multi-threaded runtime exists (Landlock binds the calling thread and what it starts later);
//! it strips credentials from the environment and restricts the process with Landlock:
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
//! - **execute**: only what the local tools run ([`seam_local::programs`]: `git` and its
//!   libexec directory, `dot`, aesthesis's formatters and linters such as `rustfmt` (and, when
//!   it is a rustup proxy, the toolchains) — each resolved on PATH now), plus the ELF loader. The loader runs any program the process can *read*, so
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
//! Where a protection is unavailable, [`confine`] names it in [`Confinement::missing`]; the
//! binary says so once (a notice) or, with `--require-confinement`, refuses. `--no-confine`
//! skips all of it (debugging only).
//!
//! Why a crate of its own, between the binary and seam-sandbox: the plan is policy about the
//! agent (which of seam's home it writes, which programs its tools run, which ports it needs),
//! and seam-sandbox owns the mechanism (raw Landlock and seccomp, the only `unsafe`) and no
//! seam policy; the programs come from seam-local, which seam-sandbox must not depend on. So
//! this crate holds the decision, seam-sandbox the walls, and the binary only wires and prints.
//!
//! What this crate must never do: print (the binary says what is missing), run on its own
//! (only the launcher calls it, before the agent's runtime starts), keep a list of programs of
//! its own (they are seam-local's), or be linked by an agent-side crate (it reaches
//! seam-sandbox; the dependency table forbids it).

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use seam_sandbox::agent_wall::{self, AgentWall, Place, PlaceAccess};

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
    /// The gate's `host:port` when it listens on TCP (its unix socket needs no port).
    pub gate_tcp: Option<&'a str>,
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

/// Why the walls could not be planned or raised.
#[derive(Debug, thiserror::Error)]
pub enum ConfineError {
    #[error("stripping credentials from the environment")]
    StripEnvironment(#[source] agent_wall::WallError),
    #[error("pointing TMPDIR into the agent's walls")]
    Tmpdir(#[source] agent_wall::WallError),
    #[error("creating the agent's directory {}", path.display())]
    AgentDirectory {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("creating the agent's TMPDIR in staging")]
    AgentTmp(#[source] std::io::Error),
    #[error("the model file {}", path.display())]
    ModelFile {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("confining the agent")]
    Wall(#[source] agent_wall::WallError),
}

/// The seam home subdirectories the agent writes: its staging (worktrees, the staging
/// repositories, images, TMPDIR) and its own data (the return queue, its build records).
/// Not `memory/` (the gate's stores: the operator's notes, the codebase index), not `keys/`,
/// not the ledger.
pub const AGENT_DIRS: &[&str] = seam_home::layout::AGENT_WRITES;

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
pub fn plan(inputs: &ConfineInputs<'_>) -> Result<AgentWall, ConfineError> {
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
    for d in seam_home::SeamHome::new(inputs.seam_home).agent_writes() {
        std::fs::create_dir_all(&d).map_err(|source| ConfineError::AgentDirectory {
            path: d.clone(),
            source,
        })?;
        places.push(place(d, PlaceAccess::ReadWrite));
    }
    std::fs::create_dir_all(agent_tmp(inputs.seam_home)).map_err(ConfineError::AgentTmp)?;
    // The embedded model's prompt cache, inside `agent/`. Best effort: without it the engine
    // decodes the system prompt each turn and says why in the step's notes.
    let _ = std::fs::create_dir_all(prompt_cache_dir(inputs.seam_home));
    for objects in inputs.repo_objects {
        places.push(place(objects.clone(), PlaceAccess::Read));
    }
    if let Some(m) = inputs.model_file {
        let real = m.canonicalize().map_err(|source| ConfineError::ModelFile {
            path: m.to_path_buf(),
            source,
        })?;
        places.push(place(real, PlaceAccess::Read));
    }
    for name in seam_local::programs() {
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
    if let Some(authority) = inputs.gate_tcp
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
    seam_home::SeamHome::new(seam_home).agent_tmp()
}

/// Where the embedded model keeps its system prompt's KV state between turns (inside its
/// walls: under `agent/`, which the agent reads and writes).
pub fn prompt_cache_dir(seam_home: &Path) -> PathBuf {
    seam_home::SeamHome::new(seam_home).prompt_cache()
}

/// Strips credentials from the environment and raises the walls. Must run while the process
/// has one thread. What could not be raised is named in [`Confinement::missing`]; the caller
/// decides whether the agent may run without it.
pub fn confine(inputs: &ConfineInputs<'_>) -> Result<Confinement, ConfineError> {
    let mut report = Confinement::default();
    let removed: Vec<OsString> = std::env::vars_os()
        .map(|(k, _)| k)
        .filter(|k| looks_like_credential(&k.to_string_lossy()))
        .collect();
    agent_wall::remove_env_vars(&removed).map_err(ConfineError::StripEnvironment)?;
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
        .map_err(ConfineError::Tmpdir)?;

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
        Err(e) => return Err(ConfineError::Wall(e)),
    }
    Ok(report)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_prompt_cache_is_made_inside_a_directory_the_agent_writes() {
        let home = tempfile::tempdir().unwrap();
        // The gate on its unix socket (no port).
        let wall = plan(&ConfineInputs {
            seam_home: home.path(),
            repo_objects: &[],
            model_url: None,
            model_file: None,
            gate_tcp: None,
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

    /// The plan is data: what the agent writes is its two directories of seam's home and
    /// nothing else, and what it may start is what the local tools run, program by program,
    /// never a directory of programs.
    #[test]
    fn the_plan_writes_the_agent_directories_and_runs_the_local_tools_programs() {
        let home = tempfile::tempdir().unwrap();
        let wall = plan(&ConfineInputs {
            seam_home: home.path(),
            repo_objects: &[],
            model_url: Some("http://127.0.0.1:8080/v1"),
            model_file: None,
            gate_tcp: Some("127.0.0.1:7070"),
        })
        .unwrap();
        let places = |access| -> Vec<&Path> {
            wall.places
                .iter()
                .filter(|p| p.access == access)
                .map(|p| p.path.as_path())
                .collect()
        };
        let written = seam_home::SeamHome::new(home.path()).agent_writes();
        assert_eq!(places(PlaceAccess::ReadWrite), written);
        let run = places(PlaceAccess::ReadExec);
        for name in seam_local::programs() {
            if let Some(real) = on_path(name) {
                assert!(
                    run.contains(&real.as_path()),
                    "{name} ({real:?}) not in {run:?}"
                );
            }
        }
        for p in places(PlaceAccess::Read).into_iter().chain(run) {
            let name = p.file_name().unwrap_or_default().to_string_lossy();
            assert!(
                !PROGRAM_DIRS.contains(&name.as_ref()),
                "{p:?} is a program directory"
            );
        }
        assert_eq!(wall.connect_ports, vec![8080, 7070]);
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
