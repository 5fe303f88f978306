//! Which paths of a repository the agent may never change: the protected
//! names (keys, credentials, CI that runs with secrets) in any repository, and,
//! when the repository is seam's own source, the core partition.
//!
//! **seam's own source** is recognised by its root `Cargo.toml`: a
//! `[workspace]` whose members include a crate whose manifest names the
//! package `seam-gate`. Then every builder path is `Access::Source`, governed by
//! the `self.modify` capability, and the core partition ([`SELF_MODIFY_CORE`])
//! can never change, whatever the capability says.

use std::path::Path;

use seam_policy::policy::BUILTIN_PROTECTED_IN_HOME;
use seam_protocol::RefusalCode;

use crate::repo_path::RepoPath;

/// The core partition of seam's own source: the crates that hold policy and
/// path admission, scrubbing, the ledger, the sandbox and the keeper, this
/// crate (the builder's walls and the Critic), and the workspace manifest
/// (which holds the lints that forbid `unsafe`).
pub const SELF_MODIFY_CORE: &[&str] = &[
    "crates/seam-policy",
    "crates/seam-scrub",
    "crates/seam-ledger",
    "crates/seam-sandbox",
    "crates/seam-keeper",
    "crates/seam-local",
    "Cargo.toml",
];

/// Names no builder change may touch, in any repository (besides `.git`,
/// which a [`RepoPath`] can never name): CI that runs with the repository's
/// secrets, and the shapes of key and credential files.
pub const PROTECTED_IN_REPO: &[&str] = &[".github/workflows", ".gitlab-ci.yml", ".env", ".envrc"];

/// File name suffixes and prefixes of keys.
const KEY_SUFFIXES: &[&str] = &[".pem", ".key", ".p12", ".pfx", ".jks", ".keystore", ".kdbx"];
const KEY_PREFIXES: &[&str] = &["id_rsa", "id_dsa", "id_ecdsa", "id_ed25519", ".env."];

/// Why a path may not change.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Guarded {
    /// A protected name (a key, credentials, CI): `code` `not_allowed`.
    Protected(String),
    /// seam's core partition: `code` `core_path`.
    Core(String),
}

impl Guarded {
    pub fn code(&self) -> RefusalCode {
        match self {
            Guarded::Protected(_) => RefusalCode::NotAllowed,
            Guarded::Core(_) => RefusalCode::CorePath,
        }
    }

    pub fn message(&self, path: &str) -> String {
        match self {
            Guarded::Protected(rule) => {
                format!("path {path} is protected ({rule}): the agent never changes it")
            }
            Guarded::Core(rule) => format!(
                "path {path} is in seam's core ({rule}): the agent can never change it, whatever self.modify says"
            ),
        }
    }
}

/// True when `a` equals `prefix` or lies under it (by whole components).
fn under(path: &str, prefix: &str) -> bool {
    path == prefix
        || path
            .strip_prefix(prefix)
            .is_some_and(|rest| rest.starts_with('/'))
}

/// Whether `path` is guarded, and why. `self_source`: the repository is seam's own.
pub fn guarded(path: &RepoPath, self_source: bool) -> Option<Guarded> {
    let p = path.as_str();
    if self_source && let Some(core) = SELF_MODIFY_CORE.iter().find(|c| under(p, c)) {
        return Some(Guarded::Core((*core).to_owned()));
    }
    let lower = p.to_ascii_lowercase();
    let names: Vec<&str> = lower.split('/').collect();
    for rule in PROTECTED_IN_REPO {
        if under(&lower, rule) {
            return Some(Guarded::Protected((*rule).to_owned()));
        }
    }
    // The owner's credential places (~/.ssh, ~/.aws, .netrc, …) wherever in the tree.
    for rule in BUILTIN_PROTECTED_IN_HOME {
        let rule_names: Vec<String> = rule.split('/').map(str::to_ascii_lowercase).collect();
        if names
            .windows(rule_names.len())
            .any(|w| w.iter().zip(&rule_names).all(|(a, b)| *a == b.as_str()))
        {
            return Some(Guarded::Protected(format!("~/{rule}")));
        }
    }
    let file = names.last().copied().unwrap_or_default();
    if KEY_SUFFIXES.iter().any(|s| file.ends_with(s))
        || KEY_PREFIXES.iter().any(|s| file.starts_with(s))
    {
        return Some(Guarded::Protected(
            "a key or credential file name".to_owned(),
        ));
    }
    None
}

/// True when `repo` is seam's own source (see the module doc).
pub fn is_seam_source(repo: &Path) -> bool {
    let Some(root) = manifest(&repo.join("Cargo.toml")) else {
        return false;
    };
    let Some(members) = root
        .get("workspace")
        .and_then(|w| w.get("members"))
        .and_then(|m| m.as_array())
    else {
        return false;
    };
    members.iter().filter_map(|m| m.as_str()).any(|member| {
        let dirs: Vec<std::path::PathBuf> = match member.strip_suffix("/*") {
            Some(parent) => std::fs::read_dir(repo.join(parent))
                .map(|rd| rd.filter_map(|e| e.ok()).map(|e| e.path()).collect())
                .unwrap_or_default(),
            None => vec![repo.join(member)],
        };
        dirs.iter().any(|d| {
            manifest(&d.join("Cargo.toml"))
                .and_then(|m| {
                    m.get("package")
                        .and_then(|p| p.get("name"))
                        .and_then(|n| n.as_str().map(|s| s == "seam-gate"))
                })
                .unwrap_or(false)
        })
    })
}

fn manifest(path: &Path) -> Option<toml::Table> {
    let text = std::fs::read_to_string(path).ok()?;
    if text.len() > 1 << 20 {
        return None;
    }
    text.parse::<toml::Table>().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(p: &str, own: bool) -> Option<Guarded> {
        guarded(&RepoPath::parse(p).unwrap(), own)
    }

    #[test]
    fn protected_names() {
        for p in [
            ".github/workflows/ci.yml",
            "deploy/.ssh/id_ed25519",
            "x/.AWS/credentials",
            "certs/server.pem",
            "id_rsa",
            ".env",
            ".env.production",
            "conf/.docker/config.json",
            ".netrc",
        ] {
            assert!(matches!(g(p, false), Some(Guarded::Protected(_))), "{p}");
        }
        for p in [
            "src/lib.rs",
            "docs/keys.md",
            "environment.rs",
            "config.json",
            ".github/ISSUE.md",
        ] {
            assert_eq!(g(p, false), None, "{p}");
        }
    }

    #[test]
    fn core_only_in_seams_own_source() {
        assert!(matches!(
            g("crates/seam-policy/src/lib.rs", true),
            Some(Guarded::Core(_))
        ));
        assert!(matches!(g("Cargo.toml", true), Some(Guarded::Core(_))));
        assert_eq!(g("crates/seam-cli/src/lib.rs", true), None);
        assert_eq!(g("crates/seam-policyx/a.rs", true), None);
        assert_eq!(g("crates/seam-policy/src/lib.rs", false), None);
    }

    #[test]
    fn recognises_seams_workspace() {
        let d = tempfile::tempdir().unwrap();
        std::fs::write(
            d.path().join("Cargo.toml"),
            "[workspace]\nmembers = [\"crates/*\"]\n",
        )
        .unwrap();
        assert!(!is_seam_source(d.path()));
        std::fs::create_dir_all(d.path().join("crates/seam-gate")).unwrap();
        std::fs::write(
            d.path().join("crates/seam-gate/Cargo.toml"),
            "[package]\nname = \"seam-gate\"\n",
        )
        .unwrap();
        assert!(is_seam_source(d.path()));
        // And this very repository is.
        let here = Path::new(env!("CARGO_MANIFEST_DIR")).join("../..");
        assert!(is_seam_source(&here));
    }
}
