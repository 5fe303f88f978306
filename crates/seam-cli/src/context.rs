//! Where seam's state lives and which policy is in force: resolved once from
//! the global options.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use anyhow::Context as _;
use seam_home::SeamHome;
use seam_policy::{Policy, PolicyEnv};

use crate::cli::Global;
use crate::exit::UsageError;

#[derive(Debug)]
pub struct Context {
    pub seam_home: PathBuf,
    pub policy: Arc<Policy>,
    /// The gate's configuration (`--config`, else config.toml in seam's home if it exists).
    pub config: seam_gate::GateConfig,
}

impl Context {
    pub fn load(global: &Global) -> anyhow::Result<Context> {
        let owner_home = owner_home()?;
        let seam_home = match &global.home {
            Some(h) => absolute(h)?,
            None => default_seam_home(&owner_home),
        };
        let workspace_root = std::env::current_dir().context("reading the working directory")?;
        let env = PolicyEnv {
            owner_home,
            seam_home: seam_home.clone(),
            workspace_root,
        };
        let file = match &global.policy {
            Some(p) => Some(absolute(p)?),
            None => Some(SeamHome::new(&seam_home).policy_file()).filter(|p| p.exists()),
        };
        let policy = Policy::load(file.as_deref(), env)
            .map_err(|e| UsageError(format!("the policy is invalid: {e}")))?;
        let config_file = match &global.config {
            Some(p) => Some(absolute(p)?),
            None => Some(SeamHome::new(&seam_home).gate_config()).filter(|p| p.exists()),
        };
        let config = seam_gate::GateConfig::load(config_file.as_deref())
            .map_err(|e| UsageError(format!("the config file is invalid: {e}")))?;
        Ok(Context {
            seam_home,
            policy: Arc::new(policy),
            config,
        })
    }
}

impl Context {
    /// seam's home, made owner-only if it does not exist yet.
    pub fn ensure_home(&self) -> anyhow::Result<&Path> {
        use std::os::unix::fs::DirBuilderExt;
        if !self.seam_home.is_dir() {
            std::fs::DirBuilder::new()
                .recursive(true)
                .mode(0o700)
                .create(&self.seam_home)
                .with_context(|| format!("creating seam's home {}", self.seam_home.display()))?;
        }
        Ok(&self.seam_home)
    }

    /// The signed ledger in seam's home, opened for appending (made on first use).
    pub fn open_ledger(&self) -> anyhow::Result<seam_ledger::Ledger> {
        let home = self.ensure_home()?;
        match seam_ledger::Ledger::open(home) {
            Ok(ledger) => Ok(ledger),
            Err(e @ seam_ledger::LedgerError::Busy { .. }) => Err(anyhow::Error::new(e).context(
                "another seam process holds the ledger: if `seam gate` is running for this \
                 home, send the call through it with `seam invoke --gate`",
            )),
            Err(e) => {
                Err(anyhow::Error::new(e)
                    .context(format!("opening the ledger in {}", home.display())))
            }
        }
    }
}

fn owner_home() -> anyhow::Result<PathBuf> {
    match std::env::var_os("HOME") {
        Some(h) if !h.is_empty() && Path::new(&h).is_absolute() => Ok(PathBuf::from(h)),
        _ => Err(UsageError(
            "HOME is not set to an absolute path: seam needs it to know the owner's home".into(),
        )
        .into()),
    }
}

fn default_seam_home(owner_home: &Path) -> PathBuf {
    match std::env::var_os("XDG_DATA_HOME") {
        Some(x) if Path::new(&x).is_absolute() => PathBuf::from(x).join("seam"),
        _ => owner_home.join(".local/share/seam"),
    }
}

fn absolute(p: &Path) -> anyhow::Result<PathBuf> {
    if p.as_os_str().is_empty() {
        return Err(UsageError("an empty path was given as a directory or file".into()).into());
    }
    std::path::absolute(p).with_context(|| format!("making {} absolute", p.display()))
}
