//! The agent's config file (`agent.toml` in seam's home, or `--agent-config`):
//! what `seam ask` takes from flags, written down once.
//!
//! ```toml
//! [model]
//! url = "http://127.0.0.1:8080"   # an OpenAI-compatible server; absent: the embedded model
//! name = "qwen2.5-coder-1.5b"     # as the server knows it; absent: the server's first
//! constrain = true                # constrain decoding to the action schema
//! stream = true
//! timeout_s = 600                 # one reply, retries included
//! retries = 3                     # after a 429, a 5xx or a failed connection
//!
//! [turn]
//! max_steps = 12
//! max_seconds = 600
//! max_tokens = 16384
//! ```
//!
//! Flags win over the file. Unknown keys are refused with their name.

use std::path::{Path, PathBuf};

use serde::Deserialize;

/// Why the agent's config could not be had: the operator's to fix.
#[derive(Debug, thiserror::Error)]
pub enum AgentConfigError {
    #[error("cannot read the agent config {}", path.display())]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("the agent config {} is invalid: {message}", path.display())]
    Invalid { path: PathBuf, message: String },
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    #[serde(default)]
    pub model: ModelSection,
    #[serde(default)]
    pub turn: TurnSection,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ModelSection {
    pub url: Option<String>,
    pub name: Option<String>,
    pub constrain: Option<bool>,
    pub stream: Option<bool>,
    pub timeout_s: Option<u64>,
    pub retries: Option<u32>,
}

#[derive(Debug, Default, Clone, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnSection {
    pub max_steps: Option<u32>,
    pub max_seconds: Option<u64>,
    pub max_tokens: Option<u32>,
}

impl AgentConfig {
    /// Reads `file` if given (it must exist), else `agent.toml` in seam's
    /// home if that exists, else the defaults.
    pub fn load(file: Option<&Path>, seam_home: &Path) -> Result<AgentConfig, AgentConfigError> {
        let default = seam_home::SeamHome::new(seam_home).agent_config();
        let path = match file {
            Some(p) => p.to_path_buf(),
            None if default.exists() => default,
            None => return Ok(AgentConfig::default()),
        };
        let text = match std::fs::read_to_string(&path) {
            Ok(t) => t,
            Err(source) => return Err(AgentConfigError::Read { path, source }),
        };
        toml::from_str(&text).map_err(|e| AgentConfigError::Invalid {
            message: e.to_string().trim_end().to_owned(),
            path,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unknown_keys_are_named() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("a.toml");
        std::fs::write(&f, "[model]\nurl = \"http://h:1\"\nmodle = \"x\"\n").unwrap();
        let err = AgentConfig::load(Some(&f), dir.path())
            .unwrap_err()
            .to_string();
        assert!(err.contains("modle") && err.contains("a.toml"), "{err}");
        std::fs::write(&f, "[model]\nurl = \"http://h:1\"\n[turn]\nmax_steps = 3\n").unwrap();
        let c = AgentConfig::load(Some(&f), dir.path()).unwrap();
        assert_eq!(c.model.url.as_deref(), Some("http://h:1"));
        assert_eq!(c.turn.max_steps, Some(3));
        assert!(
            AgentConfig::load(None, dir.path())
                .unwrap()
                .model
                .url
                .is_none()
        );
    }
}
