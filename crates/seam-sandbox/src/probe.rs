//! Which walls this machine can raise: asked of the kernel once, by trying, not by reading
//! version numbers. A wall marked required that is missing makes every sandboxed run refuse,
//! naming it.

use std::os::fd::{FromRawFd, OwnedFd};
use std::path::Path;

use serde::Serialize;

use crate::python::{self, PythonInstall};
use crate::sys::{self, Forked};
use crate::{landlock, seccomp};

/// One protection and whether this machine has it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Protection {
    pub name: &'static str,
    pub active: bool,
    /// What is active, or why it is not.
    pub detail: String,
    /// Without it the sandbox refuses to run.
    pub required: bool,
}

/// Every protection, as probed.
#[derive(Debug, Clone, Serialize)]
pub struct Protections {
    pub list: Vec<Protection>,
    /// The Landlock ABI, when there is Landlock.
    pub landlock_abi: Option<u32>,
    #[serde(skip)]
    pub python: Result<PythonInstall, String>,
}

/// The namespaces a run enters, each with its name.
pub const NAMESPACES: [(u64, &str); 7] = [
    (libc::CLONE_NEWUSER as u64, "user namespace"),
    (libc::CLONE_NEWPID as u64, "PID namespace"),
    (libc::CLONE_NEWNET as u64, "network namespace"),
    (libc::CLONE_NEWNS as u64, "mount namespace"),
    (libc::CLONE_NEWIPC as u64, "IPC namespace"),
    (libc::CLONE_NEWUTS as u64, "UTS namespace"),
    (libc::CLONE_NEWCGROUP as u64, "cgroup namespace"),
];

/// All of [`NAMESPACES`].
pub fn namespace_flags() -> u64 {
    NAMESPACES.iter().fold(0, |acc, (f, _)| acc | f)
}

impl Protections {
    /// Probes the kernel, and asks `python` where it lives.
    pub fn probe(python: &Path) -> Protections {
        let mut list = Vec::new();
        let all = namespace_flags();
        match try_clone(all) {
            Ok(()) => {
                for (_, name) in NAMESPACES {
                    list.push(Protection {
                        name,
                        active: true,
                        detail: "a fresh one for every run".into(),
                        required: true,
                    });
                }
            }
            Err(all_err) => {
                for (flag, name) in NAMESPACES {
                    let flags = flag | libc::CLONE_NEWUSER as u64;
                    let (active, detail) = match try_clone(flags) {
                        Ok(()) => (true, "available on its own".to_owned()),
                        Err(e) => (false, format!("cannot be created here: {e}")),
                    };
                    list.push(Protection {
                        name,
                        active: false,
                        detail: if active {
                            format!("{detail}, but not together with the others: {all_err}")
                        } else {
                            detail
                        },
                        required: true,
                    });
                }
            }
        }

        let abi = landlock::abi_version();
        let landlock_abi = abi.as_ref().ok().copied();
        list.push(match &abi {
            Ok(v) => Protection {
                name: "Landlock (filesystem)",
                active: true,
                detail: format!(
                    "ABI {v}: read and execute the system and Python directories, write only scratch"
                ),
                required: true,
            },
            Err(why) => Protection {
                name: "Landlock (filesystem)",
                active: false,
                detail: why.clone(),
                required: true,
            },
        });
        let v = landlock_abi.unwrap_or(0);
        list.push(Protection {
            name: "Landlock (network)",
            active: v >= 4,
            detail: if v >= 4 {
                "no TCP bind or connect".into()
            } else {
                format!("needs Landlock ABI 4 (this kernel: {v}); the network namespace still has no way out")
            },
            required: false,
        });
        list.push(Protection {
            name: "Landlock (scopes)",
            active: v >= 6,
            detail: if v >= 6 {
                "no signal and no abstract unix socket outside the sandbox".into()
            } else {
                format!("needs Landlock ABI 6 (this kernel: {v}); the PID namespace still hides other processes")
            },
            required: false,
        });
        let seccomp_ok = seccomp::SUPPORTED && sys::seccomp_available();
        list.push(Protection {
            name: "seccomp filter",
            active: seccomp_ok,
            detail: if seccomp_ok {
                format!(
                    "{} system calls refused, namespace-making clone refused, sockets unix-only",
                    seccomp::DENIED.len() + 1
                )
            } else if !seccomp::SUPPORTED {
                "seam has no seccomp filter for this architecture".into()
            } else {
                "the kernel has no seccomp filtering".into()
            },
            required: true,
        });
        list.push(Protection {
            name: "rlimits",
            active: true,
            detail: "CPU time, address space, processes, file size, open files".into(),
            required: true,
        });
        let python = python::discover(python);
        list.push(match &python {
            Ok(p) => Protection {
                name: "python3",
                active: true,
                detail: format!(
                    "{} ({}); read-only in the sandbox: {}",
                    p.executable.display(),
                    p.version,
                    if p.prefix_needs_bind() {
                        format!("/usr and {}", p.prefix.display())
                    } else {
                        "/usr".to_owned()
                    }
                ),
                required: true,
            },
            Err(why) => Protection {
                name: "python3",
                active: false,
                detail: why.clone(),
                required: true,
            },
        });
        Protections {
            list,
            landlock_abi,
            python,
        }
    }

    /// The required protections that are missing.
    pub fn missing(&self) -> Vec<&Protection> {
        self.list
            .iter()
            .filter(|p| p.required && !p.active)
            .collect()
    }
}

/// Forks into these namespaces and exits at once: can this process create them?
fn try_clone(flags: u64) -> Result<(), String> {
    // SAFETY: the child does nothing but `_exit`, which is async-signal-safe.
    match unsafe { sys::clone3_with_pidfd(flags) } {
        Ok(Forked::Child) => sys::exit(0),
        Ok(Forked::Parent { pidfd, .. }) => {
            // SAFETY: the kernel just returned this pidfd to us; nothing else owns it.
            let pidfd = unsafe { OwnedFd::from_raw_fd(pidfd) };
            let _ = rustix::process::waitid(
                rustix::process::WaitId::PidFd(std::os::fd::AsFd::as_fd(&pidfd)),
                rustix::process::WaitIdOptions::EXITED,
            );
            Ok(())
        }
        Err(e) => Err(e.to_string()),
    }
}
