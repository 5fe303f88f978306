//! The governed tools. Each is a [`GovernedTool`]: a
//! declaration the toolbox checks, and a `run` that sees only admitted inputs.

mod facts_get;
mod files_read;
mod memory_build;
mod memory_codebase;
mod memory_operator;
mod memory_store;
mod python_run;
mod web_fetch;
mod web_search;

pub use facts_get::{FACTS, FactsGet};
pub use files_read::FilesRead;
pub use memory_build::MemoryBuild;
pub use memory_codebase::MemoryCodebase;
pub use memory_operator::MemoryOperator;
pub use python_run::PythonRun;
pub use web_fetch::{
    AddressRefused, CheckedResolver, FetchAllowList, HostPattern, Lookup, SpecialAddress,
    SystemLookup, WebFetch, special_address,
};
pub use web_search::{EgressAllowlist, WebSearch};

use std::sync::Arc;

use seam_policy::Policy;
use seam_scrub::Scrubber;
use seam_toolbox::{GateError, GovernedTool, LedgerHook, Toolbox};

/// The names of the built-in tools ([`builtin`]): no other tool may take one.
pub const BUILTIN_TOOL_NAMES: &[&str] = &[
    "files.read",
    "web.search",
    "web.fetch",
    "facts.get",
    "memory.codebase",
    "memory.build",
    "memory.operator",
    "python.run",
];

/// Tunables of the built-in tools.
#[derive(Debug, Clone)]
pub struct ToolboxConfig {
    /// Most bytes of text `files.read` returns in one call.
    pub files_read_max_bytes: u64,
    /// `web.search`'s backend, key resolved (from the gate's config and keeper).
    pub web: crate::config::WebSearchSetup,
    /// `web.fetch`'s allow-list and bounds (from the gate's config).
    pub fetch: crate::config::WebFetchSetup,
}

impl Default for ToolboxConfig {
    fn default() -> Self {
        ToolboxConfig {
            files_read_max_bytes: 1024 * 1024,
            web: crate::config::WebSearchSetup::Unconfigured,
            fetch: crate::config::WebFetchSetup::default(),
        }
    }
}

/// The toolbox with the built-in governed tools (and no upstream's: [`crate::Gate::open`]
/// adds those).
pub fn builtin_toolbox(
    policy: Arc<Policy>,
    scrubber: Arc<Scrubber>,
    ledger: Arc<dyn LedgerHook>,
    config: &ToolboxConfig,
) -> Result<Toolbox, GateError> {
    let tools = builtin(config, &policy);
    Toolbox::with_tools(policy, scrubber, ledger, tools)
}

/// The built-in governed tools.
pub fn builtin(config: &ToolboxConfig, policy: &Policy) -> Vec<Box<dyn GovernedTool>> {
    vec![
        Box::new(FilesRead::new(config.files_read_max_bytes)),
        Box::new(WebSearch::new(config.web.clone())),
        Box::new(WebFetch::new(config.fetch.clone())),
        Box::new(FactsGet::new(policy)),
        Box::new(MemoryCodebase::new(policy)),
        Box::new(MemoryBuild::new(policy)),
        Box::new(MemoryOperator::new(policy)),
        Box::new(PythonRun::new(policy)),
    ]
}

#[cfg(test)]
mod tests {
    use super::*;
    use seam_toolbox::check_decl_with;

    #[test]
    fn every_builtin_tool_passes_the_toolbox_rules() {
        let env = seam_policy::PolicyEnv {
            owner_home: "/nonexistent/home".into(),
            seam_home: "/nonexistent/seam".into(),
            workspace_root: "/nonexistent/ws".into(),
        };
        let policy = Policy::builtin(env);
        let tools = crate::tools::builtin(&ToolboxConfig::default(), &policy);
        assert!(!tools.is_empty());
        let mut names: Vec<&str> = tools.iter().map(|t| t.decl().name).collect();
        let mut listed = BUILTIN_TOOL_NAMES.to_vec();
        names.sort_unstable();
        listed.sort_unstable();
        assert_eq!(
            names, listed,
            "BUILTIN_TOOL_NAMES is not the built-in tools"
        );
        for t in &tools {
            check_decl_with(t.decl(), t.not_paths())
                .unwrap_or_else(|e| panic!("{}: {e}", t.decl().name));
            jsonschema::validator_for(&t.decl().schema).unwrap();
        }
    }
}
