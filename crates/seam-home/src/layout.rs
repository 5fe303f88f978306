//! seam's home, laid out: where each thing lives, and, side by side, the two security
//! decisions about that one tree: what no tool may touch ([`PROTECTED`]: the policy's
//! built-in protected list in seam's home) and what the agent's walls let it write
//! ([`AGENT_WRITES`]). The gate's stores (`memory/`) are in neither: the gate alone opens
//! them.
//!
//! ```text
//! <seam home>/
//!   keys/            protected: ledger.key, gate.token, turn-opener, the keeper's secrets
//!   ledger/          protected: the signed ledger (ledger.sqlite, head, lock)
//!   policy.toml      protected: the policy file in seam's home
//!   config.toml      protected: the gate's config file in seam's home
//!   memory/          the gate's stores: operator notes, codebase index
//!   mcp/             the gate's MCP upstreams: accepted definitions, their stderr logs
//!   staging/         the agent writes: worktrees/, repos/, images/, tmp/ (its TMPDIR)
//!   agent/           the agent writes: local.sqlite (the return queue), builds.sqlite, kv/
//!   agent.toml       the agent's config
//!   gate.sock        the gate's unix socket (0600)
//!   gate.log         the log of a gate `seam ask` started
//! ```

use std::path::{Path, PathBuf};

/// The keys: the ledger's signing key, the gate's bearer token, the turn opener, the
/// keeper's secrets.
pub const KEYS: &str = "keys";
/// The signed, hash-chained ledger.
pub const LEDGER: &str = "ledger";
/// The policy file in seam's home.
pub const POLICY_FILE: &str = "policy.toml";
/// The gate's config file in seam's home.
pub const GATE_CONFIG: &str = "config.toml";
/// The gate's memory stores.
pub const MEMORY: &str = "memory";
/// The gate's MCP upstreams' files.
pub const MCP: &str = "mcp";
/// What the agent stages: worktrees, repositories, images, its TMPDIR.
pub const STAGING: &str = "staging";
/// Under [`STAGING`]: the builder's worktrees, one a turn.
pub const WORKTREES: &str = "worktrees";
/// Under [`STAGING`]: the builder's staging repositories, `<slug>.git`.
pub const REPOS: &str = "repos";
/// Under [`STAGING`]: the diagrams the agent rendered, a directory a turn.
pub const IMAGES: &str = "images";
/// Under [`STAGING`]: the agent's TMPDIR.
pub const AGENT_TMP: &str = "tmp";
/// The agent's own data: the return queue, its build records, the prompt cache.
pub const AGENT: &str = "agent";
/// The agent's config file.
pub const AGENT_CONFIG: &str = "agent.toml";
/// The gate's unix socket.
pub const GATE_SOCKET: &str = "gate.sock";
/// The log of a gate started by `seam ask`.
pub const GATE_LOG: &str = "gate.log";
/// The gate's bearer token, relative to seam's home.
pub const GATE_TOKEN: &str = "keys/gate.token";
/// The turn opener, relative to seam's home.
pub const TURN_OPENER: &str = "keys/turn-opener";

/// Protected in every policy, relative to seam's home: no tool reads or writes them, the
/// agent's walls grant none of them. The gate's config file is among them for the policy
/// file's reason: it says what the gate runs (its MCP upstreams: their commands and
/// environments, where an API key may be written), so reading it can leak a credential and
/// writing it runs code the next time the gate starts.
pub const PROTECTED: &[&str] = &[KEYS, LEDGER, POLICY_FILE, GATE_CONFIG];

/// What the agent's walls let it read and write in seam's home: what it stages and its own
/// data. Not `memory/` (the gate's stores), not `keys/`, not the ledger.
pub const AGENT_WRITES: &[&str] = &[STAGING, AGENT];

/// The gate's default write list in seam's home: where its tools may write.
pub const GATE_WRITES: &str = STAGING;

/// seam's home at a path, with a method per place in it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SeamHome {
    root: PathBuf,
}

impl SeamHome {
    pub fn new(root: impl Into<PathBuf>) -> SeamHome {
        SeamHome { root: root.into() }
    }

    /// The home itself.
    pub fn root(&self) -> &Path {
        &self.root
    }

    pub fn keys(&self) -> PathBuf {
        self.root.join(KEYS)
    }

    pub fn gate_token(&self) -> PathBuf {
        self.root.join(GATE_TOKEN)
    }

    pub fn turn_opener(&self) -> PathBuf {
        self.root.join(TURN_OPENER)
    }

    pub fn ledger(&self) -> PathBuf {
        self.root.join(LEDGER)
    }

    pub fn policy_file(&self) -> PathBuf {
        self.root.join(POLICY_FILE)
    }

    pub fn gate_config(&self) -> PathBuf {
        self.root.join(GATE_CONFIG)
    }

    pub fn memory(&self) -> PathBuf {
        self.root.join(MEMORY)
    }

    pub fn mcp(&self) -> PathBuf {
        self.root.join(MCP)
    }

    /// The accepted tool definitions of an MCP upstream.
    pub fn mcp_definitions(&self, server: &str) -> PathBuf {
        self.mcp().join(format!("{server}.json"))
    }

    /// An MCP upstream's stderr log.
    pub fn mcp_log(&self, server: &str) -> PathBuf {
        self.mcp().join(format!("{server}.log"))
    }

    pub fn staging(&self) -> PathBuf {
        self.root.join(STAGING)
    }

    /// The builder's worktrees ([`WORKTREES`]).
    pub fn worktrees(&self) -> PathBuf {
        self.staging().join(WORKTREES)
    }

    /// The builder's staging repositories ([`REPOS`]).
    pub fn staged_repos(&self) -> PathBuf {
        self.staging().join(REPOS)
    }

    /// The agent's rendered diagrams ([`IMAGES`]).
    pub fn images(&self) -> PathBuf {
        self.staging().join(IMAGES)
    }

    /// The agent's TMPDIR (inside its walls).
    pub fn agent_tmp(&self) -> PathBuf {
        self.staging().join(AGENT_TMP)
    }

    pub fn agent(&self) -> PathBuf {
        self.root.join(AGENT)
    }

    /// The return queue.
    pub fn agent_queue(&self) -> PathBuf {
        self.agent().join("local.sqlite")
    }

    /// The agent's own build records.
    pub fn agent_build_records(&self) -> PathBuf {
        self.agent().join("builds.sqlite")
    }

    /// Where the embedded model keeps its system prompt's KV state between turns.
    pub fn prompt_cache(&self) -> PathBuf {
        self.agent().join("kv")
    }

    pub fn agent_config(&self) -> PathBuf {
        self.root.join(AGENT_CONFIG)
    }

    pub fn gate_socket(&self) -> PathBuf {
        self.root.join(GATE_SOCKET)
    }

    pub fn gate_log(&self) -> PathBuf {
        self.root.join(GATE_LOG)
    }

    /// [`PROTECTED`], in this home.
    pub fn protected(&self) -> Vec<PathBuf> {
        PROTECTED.iter().map(|p| self.root.join(p)).collect()
    }

    /// [`AGENT_WRITES`], in this home.
    pub fn agent_writes(&self) -> Vec<PathBuf> {
        AGENT_WRITES.iter().map(|p| self.root.join(p)).collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The layout, read: every place is where the module's picture says, what is protected
    /// and what the agent may write never overlap, and the gate's stores and secrets are
    /// outside what the agent writes.
    #[test]
    fn the_layout_reads_as_drawn() {
        let home = SeamHome::new("/h");
        let p = |s: &str| PathBuf::from(s);
        assert_eq!(home.keys(), p("/h/keys"));
        assert_eq!(home.gate_token(), p("/h/keys/gate.token"));
        assert_eq!(home.turn_opener(), p("/h/keys/turn-opener"));
        assert_eq!(home.ledger(), p("/h/ledger"));
        assert_eq!(home.policy_file(), p("/h/policy.toml"));
        assert_eq!(home.gate_config(), p("/h/config.toml"));
        assert_eq!(home.memory(), p("/h/memory"));
        assert_eq!(home.mcp_definitions("fs"), p("/h/mcp/fs.json"));
        assert_eq!(home.mcp_log("fs"), p("/h/mcp/fs.log"));
        assert_eq!(home.staging(), p("/h/staging"));
        assert_eq!(home.worktrees(), p("/h/staging/worktrees"));
        assert_eq!(home.staged_repos(), p("/h/staging/repos"));
        assert_eq!(home.images(), p("/h/staging/images"));
        assert_eq!(home.agent_tmp(), p("/h/staging/tmp"));
        assert_eq!(home.agent_queue(), p("/h/agent/local.sqlite"));
        assert_eq!(home.agent_build_records(), p("/h/agent/builds.sqlite"));
        assert_eq!(home.prompt_cache(), p("/h/agent/kv"));
        assert_eq!(home.agent_config(), p("/h/agent.toml"));
        assert_eq!(home.gate_socket(), p("/h/gate.sock"));
        assert_eq!(home.gate_log(), p("/h/gate.log"));
        assert_eq!(
            home.protected(),
            [
                p("/h/keys"),
                p("/h/ledger"),
                p("/h/policy.toml"),
                p("/h/config.toml")
            ]
        );
        assert_eq!(home.agent_writes(), [p("/h/staging"), p("/h/agent")]);

        let protected = home.protected();
        let writes = home.agent_writes();
        for w in &writes {
            for x in &protected {
                assert!(
                    !w.starts_with(x) && !x.starts_with(w),
                    "{} (the agent writes) and {} (protected) overlap",
                    w.display(),
                    x.display()
                );
            }
        }
        // The secrets and the gate's own files are under no place the agent writes.
        for gate_only in [
            home.gate_token(),
            home.turn_opener(),
            home.gate_config(),
            home.memory(),
            home.mcp(),
            home.gate_socket(),
        ] {
            assert!(
                !writes.iter().any(|w| gate_only.starts_with(w)),
                "{}",
                gate_only.display()
            );
        }
        // The agent's own files are inside its walls; the gate writes only to staging.
        for own in [
            home.worktrees(),
            home.staged_repos(),
            home.images(),
            home.agent_tmp(),
            home.agent_queue(),
            home.agent_build_records(),
            home.prompt_cache(),
        ] {
            assert!(
                writes.iter().any(|w| own.starts_with(w)),
                "{}",
                own.display()
            );
        }
        assert!(AGENT_WRITES.contains(&GATE_WRITES));
        assert!(protected.iter().any(|x| home.gate_token().starts_with(x)));
        assert!(protected.iter().any(|x| home.turn_opener().starts_with(x)));
    }
}
