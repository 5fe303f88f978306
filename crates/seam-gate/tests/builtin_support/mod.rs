//! A toolbox with the built-in policy and every governed tool, for tests that
//! need no policy of their own: the owner's home is `root/home`, seam's home
//! `root/seam`, and the workspace `root/WORKSPACE`.

use std::path::Path;
use std::sync::Arc;

use seam_gate::{NoLedger, Toolbox, ToolboxConfig};
use seam_policy::{Policy, PolicyEnv};

pub fn builtin_toolbox(root: &Path, workspace: &str) -> Toolbox {
    let env = PolicyEnv {
        owner_home: root.join("home"),
        seam_home: root.join("seam"),
        workspace_root: root.join(workspace),
    };
    Toolbox::new(
        Arc::new(Policy::builtin(env)),
        Arc::new(seam_scrub::Scrubber::new()),
        Arc::new(NoLedger),
        &ToolboxConfig::default(),
    )
    .unwrap()
}
