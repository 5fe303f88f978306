//! A toolbox with the built-in policy and every governed tool, for tests that
//! need no policy of their own: the owner's home is `root/home`, seam's home
//! `root/seam`, and the workspace `root/WORKSPACE` (`root/ws` for a policy of
//! the test's own, [`policy_of`]).

use std::path::Path;
use std::sync::Arc;

use seam_gate::{NoLedger, Toolbox, ToolboxConfig};
use seam_policy::{Policy, PolicyEnv};

/// The built-in policy over these places.
pub fn builtin_policy(root: &Path, workspace: &str) -> Arc<Policy> {
    Arc::new(Policy::builtin(PolicyEnv {
        owner_home: root.join("home"),
        seam_home: root.join("seam"),
        workspace_root: root.join(workspace),
    }))
}

/// The policy written in `text` over these places, the workspace `root/ws`.
#[allow(dead_code)] // not every test that shares this module writes a policy
pub fn policy_of(root: &Path, text: &str) -> Arc<Policy> {
    let env = PolicyEnv {
        owner_home: root.join("home"),
        seam_home: root.join("seam"),
        workspace_root: root.join("ws"),
    };
    Arc::new(Policy::from_toml_str(text, Path::new("p.toml"), env).unwrap())
}

/// The toolbox over [`builtin_policy`], its scrubber given no known value.
#[allow(dead_code)] // not every test that shares this module builds its toolbox by hand
pub fn builtin_toolbox(root: &Path, workspace: &str) -> Toolbox {
    seam_gate::builtin_toolbox(
        builtin_policy(root, workspace),
        Arc::new(seam_scrub::Scrubber::new()),
        Arc::new(NoLedger),
        &ToolboxConfig::default(),
    )
    .unwrap()
}
