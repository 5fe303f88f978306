//! The governed tools. Each is a [`GovernedTool`](crate::GovernedTool): a
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

use seam_policy::Policy;

use crate::toolbox::{GovernedTool, ToolboxConfig};

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
